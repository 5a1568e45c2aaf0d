-- The partitions a message listing reads, by queue, partition, namespace and
-- task (each NULL: any), at most a limit of them; a partition's last offset
-- is the end of its newest segment (log_start - 1 without one).
SELECT p.id, p.name AS partition, p.log_start, COALESCE(t.end_offset, p.log_start - 1) AS last_offset,
       q.id AS queue_id, q.name AS queue, q.namespace, q.task, q.priority
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE q.tenant_id = $1
   AND ($2::text IS NULL OR q.name = $2) AND ($3::text IS NULL OR p.name = $3)
   AND ($4::text IS NULL OR q.namespace = $4) AND ($5::text IS NULL OR q.task = $5)
 ORDER BY p.id
 LIMIT $6
