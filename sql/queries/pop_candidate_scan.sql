-- The candidate scan, the part pop_candidates.sql and
-- pop_named_candidates.sql share: for the queue w(queue_id, window_secs,
-- after), its partitions p that hold messages this group has not done,
-- whose lease (if any) has expired and whose retry delay has passed, past
-- the queue's window buffer. $3 group, $4 partition name or NULL, $5 limit;
-- w.after is the scan position ('' for none).
--
-- A scan reads the partitions in name order from just past the position
-- (lap 0, up to the queue's last name), then from the first name up to the
-- position (lap 1), and stops at the $5-th candidate: it costs the
-- partitions it reads to find them, not the queue's size. The caller moves
-- the position to the last candidate it got, so the next scan starts where
-- this one stopped and every partition is reached in turn. Each lap is one
-- index range scan in index order (the caller plans it with neither a
-- sequential nor a bitmap scan, which would read the whole range before
-- the first row).
--
-- A named partition is probed by its whole key, in a branch of its own: as
-- one condition ($4 IS NULL OR name = $4), the queue's every partition is
-- read to find it. Each cursor is probed by its key (OFFSET 0 keeps the
-- probe a subquery of its own).
SELECT p.id, p.name, p.log_start, l.lap, c.partition_id IS NULL AS fresh, c.lease_expires_at
  FROM (VALUES (0, w.after,
                (SELECT max(m.name) FROM queen.log_partitions m WHERE m.queue_id = w.queue_id)),
               (1, '', w.after)) AS l(lap, after, upto)
 CROSS JOIN LATERAL (
       (SELECT a.id, a.name, a.log_start, a.last_offset, a.last_write_at
          FROM queen.log_partitions a
         WHERE $4::text IS NULL AND a.queue_id = w.queue_id AND a.name > l.after AND a.name <= l.upto
         ORDER BY a.name)
       UNION ALL
       SELECT b.id, b.name, b.log_start, b.last_offset, b.last_write_at
         FROM queen.log_partitions b WHERE l.lap = 0 AND b.queue_id = w.queue_id AND b.name = $4) p
  LEFT JOIN LATERAL (
       SELECT c.partition_id, c.committed, c.lease_id, c.lease_expires_at, c.retry_at
         FROM queen.log_consumers c
        WHERE c.partition_id = p.id AND c.consumer_group = $3 OFFSET 0) c ON true
 WHERE p.last_offset >= p.log_start
   AND (w.window_secs = 0 OR p.last_write_at <= now() - make_interval(secs => w.window_secs))
   AND (c.partition_id IS NULL OR (
         c.committed < p.last_offset
         AND (c.lease_id IS NULL OR c.lease_expires_at <= now())
         AND (c.retry_at IS NULL OR c.retry_at <= now())))
 LIMIT $5
