-- Per shard, the due instant of its first timer from its floor ($1[shard
-- + 1], microseconds since the epoch; NULL: from the first) that is not
-- done (NULL: none), and now, both in microseconds since the epoch. A
-- floor is where every timer before is known done (timers/floors.rs): the
-- scan passes the done timers the retention cycle has not deleted yet
-- only from there.
SELECT g.i AS shard, (extract(epoch FROM statement_timestamp()) * 1000000)::int8 AS now_us,
       (extract(epoch FROM (
          SELECT t.deliver_at FROM queen.log_timers t
           WHERE t.shard = g.i::smallint
             AND t.deliver_at >= COALESCE('epoch'::timestamptz + $1[g.i + 1] * interval '1 microsecond', '-infinity')
             AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)
           ORDER BY t.deliver_at LIMIT 1)) * 1000000)::int8 AS first_us
  FROM generate_series(0, 63) AS g(i)
