SELECT p.id, p.name, p.log_start, COALESCE(t.end_offset, p.log_start - 1) AS last_offset
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE p.queue_id = $1 ORDER BY p.id LIMIT $2
