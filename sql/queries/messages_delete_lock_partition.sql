-- The partition a message delete takes first (the lock order: partitions
-- before segments and the other leaves).
SELECT id FROM queen.log_partitions WHERE id = $1 FOR UPDATE
