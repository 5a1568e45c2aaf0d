SELECT count(*)::int8 AS partitions, COALESCE(sum(last_offset + 1 - log_start), 0)::int8 AS messages,
     (SELECT count(*)::int8 FROM queen.log_dlq WHERE queue_id = $1) AS failed
FROM queen.log_partitions WHERE queue_id = $1
