-- The entries of a fetch, by position: the queue (NULL: no such queue) and
-- the partition (NULL: never written) each names, with its watermarks.
SELECT e.i::int8 AS i, q.id AS queue_id, p.id AS partition_id, p.last_offset, p.log_start
  FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e (queue, partition, i)
  LEFT JOIN queen.queues q ON q.tenant_id = $1 AND q.name = e.queue
  LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = e.partition
 ORDER BY e.i
