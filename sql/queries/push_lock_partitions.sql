SELECT id, txns_start FROM queen.log_partitions WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE
