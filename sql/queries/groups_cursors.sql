SELECT c.consumer_group, q.name AS queue, p.name AS partition, p.id AS partition_id, c.committed,
       l.last_offset, c.lease_id IS NOT NULL AND c.lease_expires_at > now() AS leased,
       GREATEST(l.last_offset - GREATEST(c.committed, p.log_start - 1), 0)::int8 AS lag,
       (extract(epoch FROM o.created_at) * 1000000)::int8 AS oldest_us,
       COALESCE(extract(epoch FROM now() - o.created_at), 0)::float8 AS lag_seconds
  FROM queen.log_consumers c
  JOIN queen.log_partitions p ON p.id = c.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
  CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
  LEFT JOIN LATERAL (
      SELECT s.created_at FROM queen.log_segments s
       WHERE l.last_offset > GREATEST(c.committed, p.log_start - 1) AND s.partition_id = p.id
         AND s.base_offset <= GREATEST(c.committed + 1, p.log_start)
       ORDER BY s.base_offset DESC LIMIT 1) o ON true
 WHERE ($1::text IS NULL OR c.consumer_group = $1)
 ORDER BY c.consumer_group, q.name, p.name
 LIMIT $2
