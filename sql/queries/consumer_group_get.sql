SELECT q.name AS queue, p.name AS partition, p.id AS partition_id, c.committed,
       COALESCE(t.end_offset, p.log_start - 1) AS last_offset,
       c.lease_id IS NOT NULL AND c.lease_expires_at > now() AS leased
 FROM queen.log_consumers c
 JOIN queen.log_partitions p ON p.id = c.partition_id
 JOIN queen.queues q ON q.id = p.queue_id
 LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                     WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
WHERE c.consumer_group = $1 ORDER BY q.name, p.name
