-- Per partition of queue $1 (NULL: of every queue), its counts under one
-- cursor: consumer group $3, or (NULL) the slowest named group with the
-- queue-mode cursor ($2) only where no named group has one. A partition
-- without that cursor has committed nothing. processing is the open span of
-- the live leases counted (every group's when $3 is NULL). The last offset
-- is the end of the partition's newest segment (log_start - 1 without one),
-- the newest write the later of the row's last_write_at and that segment's.
WITH cons AS (
    SELECT c.partition_id,
           CASE WHEN $3::text IS NULL
                THEN COALESCE(min(c.committed) FILTER (WHERE c.consumer_group <> $2),
                              min(c.committed) FILTER (WHERE c.consumer_group = $2))
                ELSE min(c.committed) FILTER (WHERE c.consumer_group = $3) END AS committed,
           sum(GREATEST(0, c.lease_end - c.committed))
               FILTER (WHERE c.lease_id IS NOT NULL AND c.lease_expires_at > now()
                         AND ($3::text IS NULL OR c.consumer_group = $3)) AS processing
      FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
     WHERE $1::int8 IS NULL OR p.queue_id = $1
     GROUP BY c.partition_id
), parts AS (
    SELECT p.queue_id, p.id, p.name, l.last_offset, p.log_start,
           (extract(epoch FROM p.created_at) * 1000000)::int8 AS created_us,
           (extract(epoch FROM p.oldest_live_at) * 1000000)::int8 AS oldest_us,
           CASE WHEN l.last_offset >= p.log_start
                THEN (extract(epoch FROM GREATEST(p.last_write_at, t.created_at)) * 1000000)::int8 END AS newest_us,
           GREATEST(l.last_offset - p.log_start + 1, 0)::int8 AS total,
           GREATEST(l.last_offset - GREATEST(COALESCE(w.committed, -1), p.log_start - 1), 0)::int8 AS pending,
           COALESCE(w.processing, 0)::int8 AS leased
      FROM queen.log_partitions p LEFT JOIN cons w ON w.partition_id = p.id
      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
      CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
     WHERE $1::int8 IS NULL OR p.queue_id = $1
)
SELECT queue_id, id, name, last_offset, log_start, created_us, oldest_us, newest_us, total, pending,
       LEAST(leased, pending) AS processing,
       (SELECT count(*) FROM queen.log_dlq d WHERE d.partition_id = parts.id)::int8 AS dead_letter
  FROM parts
 ORDER BY queue_id, name
 LIMIT $4
