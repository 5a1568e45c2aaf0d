-- The partitions a message listing reads, by queue, partition, namespace and
-- task (each NULL: any), at most a limit of them.
SELECT p.id, p.name AS partition, p.log_start, p.last_offset, q.id AS queue_id, q.name AS queue,
       q.namespace, q.task, q.priority
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.tenant_id = $1
   AND ($2::text IS NULL OR q.name = $2) AND ($3::text IS NULL OR p.name = $3)
   AND ($4::text IS NULL OR q.namespace = $4) AND ($5::text IS NULL OR q.task = $5)
 ORDER BY p.id
 LIMIT $6
