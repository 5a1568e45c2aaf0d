-- The candidate scan (the same in pop_candidates.sql and
-- pop_named_candidates.sql): partitions p of the queues w(queue_id,
-- window_secs) that hold messages this group has not done, whose lease (if
-- any) has expired and whose retry delay has passed, past their window
-- buffer; partitions the group never read first, then the longest expired.
-- $3 group, $4 partition name or NULL, $5 limit. A named partition is
-- probed by its whole key, in a branch of its own: as one condition
-- ($4 IS NULL OR name = $4), the queue's every partition is read to find
-- it. now() comes back in epoch microseconds.
SELECT q.id AS queue_id, q.name AS queue, q.window_buffer, q.delayed_processing, q.lease_time,
       k.id, k.name, k.log_start, k.fresh, (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM queen.queues q
  LEFT JOIN LATERAL (
       SELECT p.id, p.name, p.log_start, c.partition_id IS NULL AS fresh, c.lease_expires_at
         FROM (SELECT q.id AS queue_id, q.window_buffer AS window_secs) w
        CROSS JOIN LATERAL (
              SELECT a.id, a.name, a.log_start, a.last_offset, a.last_write_at
                FROM queen.log_partitions a WHERE $4::text IS NULL AND a.queue_id = w.queue_id
              UNION ALL
              SELECT b.id, b.name, b.log_start, b.last_offset, b.last_write_at
                FROM queen.log_partitions b WHERE b.queue_id = w.queue_id AND b.name = $4) p
         LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = $3
        WHERE p.last_offset >= p.log_start
          AND (w.window_secs = 0 OR p.last_write_at <= now() - make_interval(secs => w.window_secs))
          AND (c.partition_id IS NULL OR (
                c.committed < p.last_offset
                AND (c.lease_id IS NULL OR c.lease_expires_at <= now())
                AND (c.retry_at IS NULL OR c.retry_at <= now())))
        ORDER BY c.lease_expires_at NULLS FIRST, p.id
        LIMIT $5
  ) k ON true
 WHERE q.tenant_id = $1 AND q.name = $2
 ORDER BY k.lease_expires_at NULLS FIRST, k.id
