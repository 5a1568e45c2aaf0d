SELECT count(*)::int8 AS partitions,
     COALESCE(sum(COALESCE(t.end_offset, p.log_start - 1) + 1 - p.log_start), 0)::int8 AS messages,
     (SELECT count(*)::int8 FROM queen.log_dlq d WHERE d.queue_id = $1) AS failed
FROM queen.log_partitions p
LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                    WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
WHERE p.queue_id = $1
