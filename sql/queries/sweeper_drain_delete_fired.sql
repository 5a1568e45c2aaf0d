DELETE FROM queen.log_timers t USING unnest($2::text[], $3::text[]) AS f(queue, timer_key)
WHERE t.claim_token = $1 AND t.queue = f.queue AND t.timer_key = f.timer_key
