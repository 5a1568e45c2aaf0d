-- The queues of tenant $1 matching $2 name, $3 namespace and $4 task (NULL:
-- any), by name byte by byte ($5 true) or newest first, $6 rows from $7; each with its
-- partitions' counts summed (every partition read as queues_partitions.sql
-- reads it, $8 the queue-mode cursor's group), its dead letters, the dead
-- letters DLQ retention removed, and its stored segments: count, frames and
-- bytes as stored (pg_column_size reads no blob).
WITH q AS (
    SELECT id, name, namespace, task, created_at
      FROM queen.queues
     WHERE tenant_id = $1 AND ($2::text IS NULL OR name = $2)
       AND ($3::text IS NULL OR namespace = $3) AND ($4::text IS NULL OR task = $4)
     ORDER BY CASE WHEN $5 THEN name END COLLATE "C", created_at DESC, id DESC
     LIMIT $6 OFFSET $7
), per_p AS (
    SELECT p.queue_id, n.total, n.slowest_pending,
           LEAST(COALESCE(k.leased, 0), n.slowest_pending) AS slowest_processing,
           COALESCE(k.pending, n.total) AS all_pending,
           COALESCE(k.processing, 0) AS all_processing,
           COALESCE(k.completed, 0) AS all_completed
      FROM queen.log_partitions p
      JOIN q ON q.id = p.queue_id
      LEFT JOIN LATERAL (SELECT s.end_offset FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
      CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
      LEFT JOIN LATERAL (
           SELECT COALESCE(min(c.committed) FILTER (WHERE c.consumer_group <> $8),
                           min(c.committed) FILTER (WHERE c.consumer_group = $8)) AS slowest,
                  sum(GREATEST(0, c.lease_end - c.committed)) FILTER (WHERE x.live) AS leased,
                  sum(x.unconsumed - x.processing) AS pending,
                  sum(x.processing) AS processing,
                  sum(x.completed) AS completed
             FROM queen.log_consumers c
            CROSS JOIN LATERAL (
                  SELECT c.lease_id IS NOT NULL AND c.lease_expires_at > now() AS live,
                         GREATEST(l.last_offset - GREATEST(c.committed, p.log_start - 1), 0) AS unconsumed,
                         CASE WHEN c.lease_id IS NOT NULL AND c.lease_expires_at > now()
                              THEN GREATEST(LEAST(c.lease_end, l.last_offset)
                                            - GREATEST(c.committed, p.log_start - 1), 0)
                              ELSE 0 END AS processing,
                         GREATEST(LEAST(c.committed, l.last_offset) - (p.log_start - 1), 0) AS completed) x
            WHERE c.partition_id = p.id) k ON true
      CROSS JOIN LATERAL (
           SELECT GREATEST(l.last_offset - p.log_start + 1, 0) AS total,
                  GREATEST(l.last_offset - GREATEST(COALESCE(k.slowest, -1), p.log_start - 1), 0)
                      AS slowest_pending) n
), parts AS (
    SELECT queue_id, count(*)::int8 AS partitions, sum(total)::int8 AS total,
           sum(slowest_pending)::int8 AS slowest_pending,
           sum(slowest_processing)::int8 AS slowest_processing,
           sum(all_pending)::int8 AS all_pending, sum(all_processing)::int8 AS all_processing,
           sum(all_completed)::int8 AS all_completed
      FROM per_p
     GROUP BY queue_id
), segs AS (
    SELECT p.queue_id, count(*)::int8 AS segments, sum(s.frame_count)::int8 AS frames,
           sum(pg_column_size(s.blob))::int8 AS bytes
      FROM queen.log_segments s
      JOIN queen.log_partitions p ON p.id = s.partition_id
      JOIN q ON q.id = p.queue_id
     GROUP BY p.queue_id
)
SELECT q.id, q.name, q.namespace, q.task, (extract(epoch FROM q.created_at) * 1000000)::int8 AS created_us,
       COALESCE(p.partitions, 0) AS partitions, COALESCE(p.total, 0) AS total,
       COALESCE(p.slowest_pending, 0) AS slowest_pending,
       COALESCE(p.slowest_processing, 0) AS slowest_processing,
       COALESCE(p.all_pending, 0) AS all_pending, COALESCE(p.all_processing, 0) AS all_processing,
       COALESCE(p.all_completed, 0) AS all_completed,
       (SELECT count(*) FROM queen.log_dlq d WHERE d.queue_id = q.id)::int8 AS dead_letter,
       COALESCE((SELECT r.pruned_failed_count FROM queen.queue_terminal_rollups r
                  WHERE r.queue_id = q.id), 0)::int8 AS pruned_failed,
       COALESCE(s.segments, 0) AS segments, COALESCE(s.frames, 0) AS frames,
       COALESCE(s.bytes, 0) AS bytes
  FROM q
  LEFT JOIN parts p ON p.queue_id = q.id
  LEFT JOIN segs s ON s.queue_id = q.id
 ORDER BY CASE WHEN $5 THEN q.name END COLLATE "C", q.created_at DESC, q.id DESC
