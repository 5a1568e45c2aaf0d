-- The partition taken for the watermark move, after the segments went:
-- waits for the pushes in flight, as long as lock_timeout allows.
SELECT id FROM queen.log_partitions WHERE id = $1 FOR NO KEY UPDATE
