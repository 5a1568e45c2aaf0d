-- The timers of keys ($2[k], $3[k]) still claimed under token $1, locked,
-- in key order: found by their primary key (no index serves the token).
SELECT t.queue, t.timer_key, t.partition, t.payload, t.transaction_id,
       GREATEST((extract(epoch FROM now() - t.deliver_at) * 1000)::int8, 0) AS lateness_ms, t.message_id
  FROM queen.log_timers t
  JOIN unnest($2::text[], $3::text[]) AS k(queue, timer_key)
    ON t.queue = k.queue AND t.timer_key = k.timer_key
 WHERE t.claim_token = $1
 ORDER BY t.queue, t.timer_key
   FOR UPDATE OF t
