-- The partitions of a push, each named by queue $2[k] and partition $3[k]
-- of tenant $1, locked ascending by id. Each (queue, partition) pair is
-- resolved by its whole key in a subquery of its own (OFFSET 0 keeps it
-- one): joined directly, the planner may read every queue of the tenant
-- into a hash, or probe (queue_id, name) by queue_id alone and filter the
-- names, reading every partition of the queue once per name.
SELECT k.ord, f.dedup_window_seconds, p.id, p.txns_start
  FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(queue, name, ord)
 CROSS JOIN LATERAL (SELECT q.dedup_window_seconds, n.id
                       FROM queen.queues q
                       JOIN queen.log_partitions n ON n.queue_id = q.id AND n.name = k.name
                      WHERE q.tenant_id = $1 AND q.name = k.queue OFFSET 0) f
  JOIN queen.log_partitions p ON p.id = f.id
 ORDER BY p.id
   FOR NO KEY UPDATE OF p
