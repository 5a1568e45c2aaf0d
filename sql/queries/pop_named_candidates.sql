-- The queue named $2 (tenant $1) and its candidate partitions for group $3
-- ($4: the partition of that name alone, NULL for any), at most $5; one row
-- with no partition when it finds none. The partitions the group never read
-- come first, then the longest released or expired. now() comes back in
-- epoch microseconds.
--
-- The candidate window (as in pop_candidates.sql): at most $7 partitions of
-- the queue: first the hinted partitions $8 (NULL for none) in the order
-- given (lap -1, each probed by its id), then in name order from just past
-- the scan position $6 (NULL for none): lap 0 up to the queue's last name,
-- then lap 1 from its first name up to the position. A hinted partition may
-- come again in lap 0 or 1; the caller keeps its first row. The scan stops
-- at the $5-th candidate it finds (the LIMIT after the filter) or at the
-- window's end, so it costs the partitions it reads, not the queue's size.
-- The caller moves the position to the last candidate it got: the next scan
-- starts where this one stopped, and the windows go round the queue. Each
-- lap is one index range scan in index order (the caller plans it with
-- neither a sequential nor a bitmap scan, which would read the whole range
-- before the first row). A window that finds no candidate sends the caller
-- to pop_candidates_everywhere.sql.
--
-- The partitions $9 (none: empty) are passed by unprobed: the pop found
-- them done for the group and nothing was pushed to them since (its memo,
-- engine/pop.rs); they count among the $7 read.
--
-- A named partition ($4) is probed by its whole key, in a branch of its
-- own: as one condition ($4 IS NULL OR name = $4), the queue's every
-- partition is read to find it. Each cursor is probed by its key (OFFSET 0
-- keeps the probe a subquery of its own).
--
-- The filter (as in pop_candidates.sql and pop_candidates_everywhere.sql):
-- a partition p (with its cursor c, NULL if the group has none) is a
-- candidate when it holds messages the group has not done, its lease (if
-- any) has expired, its retry delay has passed, and its newest message is
-- past its queue's window buffer. The partition's last offset and last
-- write are its newest segment's (t, one backward probe of the segments'
-- key; none when retention deleted them all).
SELECT q.id AS queue_id, q.name AS queue, q.window_buffer, q.delayed_processing, q.lease_time,
       k.id, k.name, k.log_start, k.fresh, k.lap, (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM queen.queues q
 CROSS JOIN LATERAL (SELECT q.id AS queue_id, q.window_buffer AS window_secs,
                            COALESCE($6, '') AS after, $8::int8[] AS hints) w
  LEFT JOIN LATERAL (
SELECT p.id, p.name, p.log_start, p.lap, c.partition_id IS NULL AS fresh, c.lease_expires_at
  FROM (SELECT * FROM ((SELECT -1 AS lap, h.id, h.name, h.log_start, h.last_write_at
            FROM unnest(w.hints) WITH ORDINALITY AS u(id, ord)
           CROSS JOIN LATERAL (
                 SELECT h.id, h.name, h.log_start, h.last_write_at
                   FROM queen.log_partitions h
                  WHERE $4::text IS NULL AND h.id = u.id AND h.queue_id = w.queue_id OFFSET 0) h
           ORDER BY u.ord)
        UNION ALL
        (SELECT l.lap, a.id, a.name, a.log_start, a.last_write_at
          FROM (VALUES (0, w.after,
                        (SELECT max(m.name) FROM queen.log_partitions m
                          WHERE m.queue_id = w.queue_id)),
                       (1, '', w.after)) AS l(lap, after, upto)
         CROSS JOIN LATERAL (
               (SELECT a.id, a.name, a.log_start, a.last_write_at
                  FROM queen.log_partitions a
                 WHERE $4::text IS NULL AND a.queue_id = w.queue_id
                   AND a.name > l.after AND a.name <= l.upto
                 ORDER BY a.name)
               UNION ALL
               SELECT b.id, b.name, b.log_start, b.last_write_at
                 FROM queen.log_partitions b
                WHERE l.lap = 0 AND b.queue_id = w.queue_id AND b.name = $4) a)
         LIMIT $7) pw
         WHERE pw.id NOT IN (SELECT unnest($9::int8[]))) p
  LEFT JOIN LATERAL (
       SELECT c.partition_id, c.committed, c.lease_id, c.lease_expires_at, c.retry_at
         FROM queen.log_consumers c
        WHERE c.partition_id = p.id AND c.consumer_group = $3 OFFSET 0) c ON true
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE t.end_offset >= p.log_start
   AND (w.window_secs = 0 OR GREATEST(p.last_write_at, t.created_at) <= now() - make_interval(secs => w.window_secs))
   AND (c.partition_id IS NULL OR (
         c.committed < t.end_offset
         AND (c.lease_id IS NULL OR c.lease_expires_at <= now())
         AND (c.retry_at IS NULL OR c.retry_at <= now())))
 LIMIT $5) k ON true
 WHERE q.tenant_id = $1 AND q.name = $2
 ORDER BY k.lease_expires_at NULLS FIRST, k.id
