-- The candidate partitions of the queues $1 (window buffers $2) for group
-- $3, found among all their partitions but those of $5 (the pop's memo:
-- found done, nothing pushed since), $4 at most: for a pop whose candidate
-- windows found none (a queue of many partitions, few of them holding
-- messages for the group, or none). It reads every partition of the queues
-- and probes each one's cursor by its key (the caller plans it with no
-- sequential scan, hash or merge join: spi::exec_probing), so it costs the
-- queues' partitions: a hash join read the whole cursor key to find the
-- group's cursors, every queue's. It takes the partitions the group never
-- read first, then the longest released or expired. now() comes back in
-- epoch microseconds.
--
-- The filter (as in pop_candidates.sql and pop_named_candidates.sql): a
-- partition p (with its cursor c, NULL if the group has none) is a
-- candidate when it holds messages the group has not done, its lease (if
-- any) has expired, its retry delay has passed, and its newest message is
-- past its queue's window buffer. The partition's last offset and last
-- write are its newest segment's (t, one backward probe of the segments'
-- key; none when retention deleted them all).
SELECT k.id, k.name, w.queue_id, k.log_start, k.fresh, 0 AS lap,
       (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM unnest($1::int8[], $2::int4[]) AS w(queue_id, window_secs)
 CROSS JOIN LATERAL (
       SELECT p.id, p.name, p.log_start, c.partition_id IS NULL AS fresh, c.lease_expires_at
         FROM queen.log_partitions p
         LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = $3
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE t.end_offset >= p.log_start
   AND (w.window_secs = 0 OR GREATEST(p.last_write_at, t.created_at) <= now() - make_interval(secs => w.window_secs))
   AND (c.partition_id IS NULL OR (
         c.committed < t.end_offset
         AND (c.lease_id IS NULL OR c.lease_expires_at <= now())
         AND (c.retry_at IS NULL OR c.retry_at <= now())))
          AND p.queue_id = w.queue_id AND p.id NOT IN (SELECT unnest($5::int8[]))
        ORDER BY c.lease_expires_at NULLS FIRST, p.id
        LIMIT $4) k
 ORDER BY k.lease_expires_at NULLS FIRST, k.id
 LIMIT $4
