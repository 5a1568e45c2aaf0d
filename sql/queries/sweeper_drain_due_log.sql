-- How many timers from the floors ($2, as sweeper_drain_probe_log.sql) are
-- due, not done and not held by a live claim, at most $1: a bounded range
-- of each shard's due rows.
SELECT count(*)::int8 AS due FROM (
  SELECT 1 FROM generate_series(0, 63) AS g(i)
  CROSS JOIN LATERAL (
      SELECT 1 FROM queen.log_timers t
       WHERE t.shard = g.i::smallint AND t.deliver_at <= statement_timestamp()
         AND t.deliver_at >= COALESCE('epoch'::timestamptz + $2[g.i + 1] * interval '1 microsecond', '-infinity')
         AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)
         AND NOT EXISTS (SELECT 1 FROM queen.log_timer_claims c
                          WHERE c.message_id = t.message_id AND c.claimed_until >= now())
       LIMIT $1) d
  LIMIT $1) x
