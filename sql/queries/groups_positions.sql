-- Group $1's committed offset on each (queue $2[i], partition $3[i]) of
-- tenant $4, NULL where the queue, partition or cursor is missing. Each
-- pair is resolved by its whole key in a subquery of its own (as in
-- push_lock_existing.sql).
SELECT e.i, e.queue, e.partition, c.committed
  FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(queue, partition, i)
  LEFT JOIN LATERAL (SELECT p.id
                       FROM queen.queues q
                       JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = e.partition
                      WHERE q.tenant_id = $4 AND q.name = e.queue OFFSET 0) p ON true
  LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = $1
 ORDER BY e.i
