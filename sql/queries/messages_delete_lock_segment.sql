-- The segment holding an offset, locked against a dead-letter write of the
-- same segment (which takes it FOR SHARE): whichever comes second waits, and
-- then sees the other's tombstone or dead letter.
SELECT end_offset FROM queen.log_segments WHERE partition_id = $1 AND base_offset <= $2
ORDER BY base_offset DESC LIMIT 1 FOR NO KEY UPDATE
