-- Stamps the picked timers of keys ($3[k], $4[k]), which the claim holds
-- locked, with token $1 and a lease of $2 ms, each probed by its key.
UPDATE queen.log_timers t
   SET claim_token = $1, claimed_until = now() + make_interval(secs => $2 / 1000.0), attempts = t.attempts + 1
  FROM unnest($3::text[], $4::text[]) AS k(queue, timer_key)
 WHERE t.queue = k.queue AND t.timer_key = k.timer_key
RETURNING t.queue, t.timer_key
