-- Live counts per partition of queue $1 (as status_queue_counts.sql counts
-- them), by name, at most $2 partitions. The last offset and last write come
-- from the partition's newest segment.
SELECT p.id, p.name,
       (extract(epoch FROM p.created_at) * 1000000)::int8 AS created_us,
       (extract(epoch FROM GREATEST(p.last_write_at, t.created_at)) * 1000000)::int8 AS last_write_us,
       (extract(epoch FROM p.oldest_live_at) * 1000000)::int8 AS oldest_us,
       (l.last_offset + 1 - p.log_start)::int8 AS total,
       COALESCE(sum(c.unconsumed - c.processing), l.last_offset + 1 - p.log_start)::int8 AS pending,
       COALESCE(sum(c.processing), 0)::int8 AS processing,
       COALESCE(sum(c.completed), 0)::int8 AS completed,
       COALESCE(max(c.consumed), 0)::int8 AS consumed,
       (SELECT count(*) FROM queen.log_dlq d WHERE d.partition_id = p.id)::int8 AS dead_letter
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
  CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
  LEFT JOIN LATERAL (
       SELECT GREATEST(l.last_offset - GREATEST(c.committed, p.log_start - 1), 0) AS unconsumed,
              CASE WHEN c.lease_id IS NOT NULL AND c.lease_expires_at > now()
                   THEN GREATEST(LEAST(c.lease_end, l.last_offset) - GREATEST(c.committed, p.log_start - 1), 0)
                   ELSE 0 END AS processing,
              GREATEST(LEAST(c.committed, l.last_offset) - (p.log_start - 1), 0) AS completed,
              c.committed + 1 AS consumed
         FROM queen.log_consumers c WHERE c.partition_id = p.id) c ON true
 WHERE p.queue_id = $1
 GROUP BY p.id, t.created_at, l.last_offset
 ORDER BY p.name LIMIT $2
