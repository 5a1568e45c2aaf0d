-- Per partition of queue $1, by name, at most $2: its offsets, times and
-- counts under two readings of its cursors ($3 is the queue-mode cursor's
-- group). The last offset is the end of the partition's newest segment
-- (log_start - 1 without one), the last write the later of the row's
-- last_write_at and that segment's; total = last offset - log start + 1.
-- Under the slowest cursor (the slowest named group's, the queue-mode
-- cursor only where no named group has one; none: nothing committed):
-- slowest_pending = last offset - max(committed, log start - 1), and
-- slowest_processing the open span of every group's live leases, at most
-- that. Over every cursor: each contributes what it has not consumed and
-- is not leased (all_pending), what a live lease holds (all_processing) and
-- what it consumed that is still live (all_completed); a partition no
-- cursor reads has every live message pending. consumed is the furthest
-- cursor's committed offset + 1 (0 without a cursor).
SELECT p.id, p.name, l.last_offset, p.log_start,
       (extract(epoch FROM p.created_at) * 1000000)::int8 AS created_us,
       (extract(epoch FROM GREATEST(p.last_write_at, t.created_at)) * 1000000)::int8 AS last_write_us,
       (extract(epoch FROM p.oldest_live_at) * 1000000)::int8 AS oldest_us,
       n.total::int8 AS total, n.slowest_pending::int8 AS slowest_pending,
       LEAST(COALESCE(k.leased, 0), n.slowest_pending)::int8 AS slowest_processing,
       COALESCE(k.pending, n.total)::int8 AS all_pending,
       COALESCE(k.processing, 0)::int8 AS all_processing,
       COALESCE(k.completed, 0)::int8 AS all_completed,
       COALESCE(k.consumed, 0)::int8 AS consumed,
       (SELECT count(*) FROM queen.log_dlq d WHERE d.partition_id = p.id)::int8 AS dead_letter
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
  CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
  LEFT JOIN LATERAL (
       SELECT COALESCE(min(c.committed) FILTER (WHERE c.consumer_group <> $3),
                       min(c.committed) FILTER (WHERE c.consumer_group = $3)) AS slowest,
              sum(GREATEST(0, c.lease_end - c.committed)) FILTER (WHERE x.live) AS leased,
              sum(x.unconsumed - x.processing) AS pending,
              sum(x.processing) AS processing,
              sum(x.completed) AS completed,
              max(c.committed + 1) AS consumed
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
 WHERE p.queue_id = $1
 ORDER BY p.name
 LIMIT $2
