SELECT txns_start FROM queen.log_partitions WHERE id = $1 FOR UPDATE
