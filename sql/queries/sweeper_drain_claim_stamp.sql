-- Stamps the picked timers of keys ($3[k], $4[k]), which the claim holds
-- locked, with token $1 and a lease of $2 ms. Each key is probed on its own
-- (OFFSET 0 keeps the probe a subquery of its own) and the rows are
-- updated by address: joined to the keys, a plan made while the table was
-- nearly empty reads every timer.
UPDATE queen.log_timers t
   SET claim_token = $1, claimed_until = now() + make_interval(secs => $2 / 1000.0), attempts = t.attempts + 1
 WHERE t.ctid = ANY (ARRAY(
       SELECT x.ctid FROM unnest($3::text[], $4::text[]) AS k(queue, timer_key)
        CROSS JOIN LATERAL (SELECT l.ctid FROM queen.log_timers l
                             WHERE l.queue = k.queue AND l.timer_key = k.timer_key OFFSET 0) x))
RETURNING t.queue, t.timer_key
