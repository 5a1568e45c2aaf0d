SELECT p.id, p.name, COALESCE(t.end_offset, p.log_start - 1) AS last_offset, p.log_start,
       (extract(epoch FROM GREATEST(p.last_write_at, t.created_at)) * 1000000)::int8 AS last_write_us
FROM queen.log_partitions p
LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                    WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
WHERE p.queue_id = $1 ORDER BY p.name LIMIT $2
