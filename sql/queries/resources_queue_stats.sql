-- Every queue (or queue $1) with its counts summed over its partitions under
-- the worst cursor (the slowest named group, the queue-mode cursor $2 only
-- where no named group has one), its dead letters, and its stored segments:
-- count, frames and bytes as stored (pg_column_size reads no blob), newest
-- first. A partition's last offset is the end of its newest segment
-- (log_start - 1 without one), taken per partition before summing.
WITH cons AS (
    SELECT c.partition_id,
           COALESCE(min(c.committed) FILTER (WHERE c.consumer_group <> $2),
                    min(c.committed) FILTER (WHERE c.consumer_group = $2)) AS committed,
           sum(GREATEST(0, c.lease_end - c.committed))
               FILTER (WHERE c.lease_id IS NOT NULL AND c.lease_expires_at > now()) AS processing
      FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
     WHERE $1::int8 IS NULL OR p.queue_id = $1
     GROUP BY c.partition_id
), parts AS (
    SELECT p.queue_id, count(*)::int8 AS partitions,
           sum(GREATEST(l.last_offset - p.log_start + 1, 0))::int8 AS total,
           sum(GREATEST(l.last_offset - GREATEST(COALESCE(w.committed, -1), p.log_start - 1), 0))::int8 AS pending,
           sum(LEAST(COALESCE(w.processing, 0),
                     GREATEST(l.last_offset - GREATEST(COALESCE(w.committed, -1), p.log_start - 1), 0)))::int8
               AS processing
      FROM queen.log_partitions p LEFT JOIN cons w ON w.partition_id = p.id
      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
      CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
     WHERE $1::int8 IS NULL OR p.queue_id = $1
     GROUP BY p.queue_id
), segs AS (
    SELECT p.queue_id, count(*)::int8 AS segments, sum(s.frame_count)::int8 AS frames,
           sum(pg_column_size(s.blob))::int8 AS bytes
      FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
     WHERE $1::int8 IS NULL OR p.queue_id = $1
     GROUP BY p.queue_id
), dead AS (
    SELECT d.queue_id, count(*)::int8 AS dead_letter
      FROM queen.log_dlq d
     WHERE $1::int8 IS NULL OR d.queue_id = $1
     GROUP BY d.queue_id
)
SELECT q.id, q.name, q.namespace, q.task, (extract(epoch FROM q.created_at) * 1000000)::int8 AS created_us,
       COALESCE(p.partitions, 0) AS partitions, COALESCE(p.total, 0) AS total,
       COALESCE(p.pending, 0) AS pending, COALESCE(p.processing, 0) AS processing,
       COALESCE(d.dead_letter, 0) AS dead_letter, COALESCE(s.segments, 0) AS segments,
       COALESCE(s.frames, 0) AS frames, COALESCE(s.bytes, 0) AS bytes
  FROM queen.queues q
  LEFT JOIN parts p ON p.queue_id = q.id
  LEFT JOIN segs s ON s.queue_id = q.id
  LEFT JOIN dead d ON d.queue_id = q.id
 WHERE q.tenant_id = $3 AND ($1::int8 IS NULL OR q.id = $1)
 ORDER BY q.created_at DESC, q.id DESC
 LIMIT $4
