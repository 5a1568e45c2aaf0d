SELECT id, name, log_start, last_offset FROM queen.log_partitions WHERE queue_id = $1 ORDER BY id LIMIT $2
