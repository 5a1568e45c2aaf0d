-- The partitions (of queue $1, or of every queue) holding the most pending
-- offsets under their slowest reader (the slowest named group, the
-- queue-mode cursor $2 only where no named group has one), at most $3 of
-- them; oldest_us is when the oldest unread segment was written (NULL:
-- caught up). A partition's last offset is the end of its newest segment
-- (log_start - 1 without one).
WITH cons AS (
    SELECT c.partition_id,
           COALESCE(min(c.committed) FILTER (WHERE c.consumer_group <> $2),
                    min(c.committed) FILTER (WHERE c.consumer_group = $2)) AS committed,
           sum(GREATEST(0, c.lease_end - c.committed))
               FILTER (WHERE c.lease_id IS NOT NULL AND c.lease_expires_at > now()) AS processing
      FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE $1::text IS NULL OR q.name = $1
     GROUP BY c.partition_id
), parts AS (
    SELECT q.name AS queue, p.id, p.name,
           GREATEST(COALESCE(w.committed, -1), p.log_start - 1) AS done,
           GREATEST(COALESCE(t.end_offset, p.log_start - 1) - GREATEST(COALESCE(w.committed, -1), p.log_start - 1), 0)::int8 AS pending,
           COALESCE(w.processing, 0)::int8 AS leased
      FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
      LEFT JOIN cons w ON w.partition_id = p.id
      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
     WHERE q.tenant_id = $4 AND ($1::text IS NULL OR q.name = $1)
     ORDER BY 5 DESC, q.name, p.name
     LIMIT $3
)
SELECT parts.queue, parts.id, parts.name, parts.pending, LEAST(parts.leased, parts.pending) AS processing,
       CASE WHEN parts.pending > 0 THEN
            (SELECT (extract(epoch FROM s.created_at) * 1000000)::int8 FROM queen.log_segments s
              WHERE s.partition_id = parts.id AND s.base_offset >= COALESCE(
                    (SELECT max(h.base_offset) FROM queen.log_segments h
                      WHERE h.partition_id = parts.id AND h.base_offset <= parts.done + 1), parts.done + 1)
              ORDER BY s.base_offset LIMIT 1) END AS oldest_us
  FROM parts
 ORDER BY parts.pending DESC, parts.queue, parts.name
