WITH picked AS (
    SELECT v.queue, v.timer_key FROM generate_series(0, 63) AS g(i)
    CROSS JOIN LATERAL (
        SELECT queue, timer_key FROM queen.log_timers
         WHERE shard = ((($1 + g.i) % 64 + 64) % 64)::smallint AND deliver_at <= now()
           AND (claimed_until IS NULL OR claimed_until < now())
         ORDER BY deliver_at LIMIT $2 FOR UPDATE SKIP LOCKED) v
    LIMIT $2)
UPDATE queen.log_timers t
   SET claim_token = $3, claimed_until = now() + make_interval(secs => $4 / 1000.0), attempts = t.attempts + 1
  FROM picked p WHERE t.queue = p.queue AND t.timer_key = p.timer_key
RETURNING 1
