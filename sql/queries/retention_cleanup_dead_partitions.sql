SELECT id FROM queen.log_partitions p WHERE queen_internal.log_partition_dead_v1(p.id, $1)
ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
