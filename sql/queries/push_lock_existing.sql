SELECT k.ord, q.dedup_window_seconds, p.id, p.last_offset, p.txns_start
 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(queue, name, ord)
 JOIN queen.queues q ON q.tenant_id = $1 AND q.name = k.queue
 JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = k.name
ORDER BY p.id
  FOR NO KEY UPDATE OF p
