-- The timers of keys ($2[k], $3[k]) still claimed under token $1, locked
-- in key order (the keys come sorted). Each key is probed on its own by
-- the primary key (no index serves the token; joined to the keys, a plan
-- made while the table was nearly empty reads every timer).
SELECT t.queue, t.timer_key, t.partition, t.payload, t.transaction_id,
       GREATEST((extract(epoch FROM now() - t.deliver_at) * 1000)::int8, 0) AS lateness_ms, t.message_id
  FROM unnest($2::text[], $3::text[]) AS k(queue, timer_key)
 CROSS JOIN LATERAL (SELECT * FROM queen.log_timers l
                      WHERE l.queue = k.queue AND l.timer_key = k.timer_key AND l.claim_token = $1
                        FOR UPDATE) t
 ORDER BY t.queue, t.timer_key
