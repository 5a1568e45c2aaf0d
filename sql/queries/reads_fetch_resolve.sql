-- The entries of a fetch, by position: the queue (NULL: no such queue) and
-- the partition (NULL: never written) each names, with its watermarks (the
-- last offset is the end of the partition's newest segment, log_start - 1
-- without one). The queue and the partition are each resolved by their
-- whole key in a subquery of their own (as in push_lock_existing.sql).
SELECT e.i::int8 AS i, q.id AS queue_id, p.id AS partition_id, p.last_offset, p.log_start
  FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e (queue, partition, i)
  LEFT JOIN LATERAL (SELECT q.id FROM queen.queues q
                      WHERE q.tenant_id = $1 AND q.name = e.queue OFFSET 0) q ON true
  LEFT JOIN LATERAL (SELECT p.id, COALESCE(t.end_offset, p.log_start - 1) AS last_offset, p.log_start
                       FROM queen.log_partitions p
                       LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                                           WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
                      WHERE p.queue_id = q.id AND p.name = e.partition OFFSET 0) p ON true
 ORDER BY e.i
