-- Every consumer group on every queue, one row per (group, queue), by group
-- then queue, at most $1 rows: its cursors (how many, how many lag, how many
-- hold a lease, whether any has consumed), its lag (messages kept past its
-- cursors), how old the oldest message past any cursor is, and its
-- subscription (null where it has none). A group subscribed with no cursor
-- yet has a row with no cursors.
WITH cur AS (
    SELECT c.consumer_group, p.queue_id, count(*)::int8 AS partitions,
           sum(l.lag)::int8 AS lag,
           count(*) FILTER (WHERE l.lag > 0)::int8 AS with_lag,
           count(*) FILTER (WHERE c.lease_id IS NOT NULL AND c.lease_expires_at > now())::int8 AS members,
           COALESCE(max(GREATEST(extract(epoch FROM now() - o.created_at), 0)) FILTER (WHERE l.lag > 0), 0)::float8
               AS max_lag_seconds,
           bool_or(c.committed >= 0) AS consumed
      FROM queen.log_consumers c
      JOIN queen.log_partitions p ON p.id = c.partition_id
      LEFT JOIN LATERAL (SELECT s.end_offset FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
     CROSS JOIN LATERAL (SELECT GREATEST(COALESCE(t.end_offset, p.log_start - 1)
                                         - GREATEST(c.committed, p.log_start - 1), 0)::int8 AS lag) l
      LEFT JOIN LATERAL (
          SELECT s.created_at FROM queen.log_segments s
           WHERE l.lag > 0 AND s.partition_id = p.id
             AND s.base_offset <= GREATEST(c.committed + 1, p.log_start)
           ORDER BY s.base_offset DESC LIMIT 1) o ON true
     GROUP BY c.consumer_group, p.queue_id)
SELECT COALESCE(cur.consumer_group, g.consumer_group) AS consumer_group, q.name AS queue,
       COALESCE(cur.partitions, 0) AS partitions, COALESCE(cur.lag, 0) AS lag,
       COALESCE(cur.with_lag, 0) AS with_lag, COALESCE(cur.members, 0) AS members,
       COALESCE(cur.max_lag_seconds, 0) AS max_lag_seconds, COALESCE(cur.consumed, false) AS consumed,
       g.subscription_mode,
       (extract(epoch FROM g.subscription_from) * 1000000)::int8 AS from_us,
       (extract(epoch FROM g.created_at) * 1000000)::int8 AS created_us,
       -- Read through the row's JSON: a schema before 0.11.0 has no such
       -- column, and its groups do not conflate.
       COALESCE((to_jsonb(g) ->> 'conflation')::boolean, false) AS conflation
  FROM cur
  FULL JOIN queen.consumer_groups g ON g.consumer_group = cur.consumer_group AND g.queue_id = cur.queue_id
  JOIN queen.queues q ON q.id = COALESCE(cur.queue_id, g.queue_id)
 ORDER BY 1, 2
 LIMIT $1
