SELECT count(*)::int8, COALESCE(sum(last_offset + 1 - log_start), 0)::int8,
     (SELECT count(*)::int8 FROM queen.log_dlq WHERE queue_id = $1)
FROM queen.log_partitions WHERE queue_id = $1
