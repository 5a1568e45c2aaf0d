SELECT id FROM queen.log_partitions WHERE queue_id = $1 ORDER BY id FOR UPDATE
