SELECT COALESCE(sum(p.last_offset + 1), 0)::int8 AS version FROM queen.log_partitions p
 JOIN queen.queues q ON q.id = p.queue_id
WHERE ($1::text IS NULL OR q.name = $1) AND ($2::text IS NULL OR q.namespace = $2)
  AND ($3::text IS NULL OR q.task = $3)
