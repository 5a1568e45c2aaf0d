-- The timers of keys ($2[k], $3[k]) whose newest claim is token $1 and
-- that are not done, locked in key order (the keys come sorted). Each key
-- is probed on its own by the primary key. Done is checked again by the
-- fire's mark (sweeper_drain_done.sql): a fire that waited here for
-- another may find its timer done by it.
SELECT t.queue, t.timer_key, t.partition, t.payload, t.transaction_id,
       GREATEST((extract(epoch FROM now() - t.deliver_at) * 1000)::int8, 0) AS lateness_ms, t.message_id
  FROM unnest($2::text[], $3::text[]) AS k(queue, timer_key)
 CROSS JOIN LATERAL (SELECT * FROM queen.log_timers l
                      WHERE l.queue = k.queue AND l.timer_key = k.timer_key
                        AND (SELECT c.token FROM queen.log_timer_claims c WHERE c.message_id = l.message_id
                              ORDER BY c.attempt DESC LIMIT 1) = $1
                        AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = l.message_id)
                        FOR UPDATE) t
 ORDER BY t.queue, t.timer_key
