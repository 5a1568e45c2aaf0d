-- Picks up to $2 due timers that are not done and not held by a live
-- claim, shard by shard from shard $1 on and from each shard's floor ($3,
-- as sweeper_drain_probe_log.sql), locking them and skipping rows another
-- sweeper or a schedule holds. The claims are inserted next
-- (sweeper_drain_claim_insert.sql).
SELECT v.queue, v.timer_key, v.message_id FROM generate_series(0, 63) AS g(i)
CROSS JOIN LATERAL (
    SELECT t.queue, t.timer_key, t.message_id FROM queen.log_timers t
     WHERE t.shard = ((($1 + g.i) % 64 + 64) % 64)::smallint AND t.deliver_at <= statement_timestamp()
       AND t.deliver_at >= COALESCE('epoch'::timestamptz
                                    + $3[((($1 + g.i) % 64 + 64) % 64) + 1] * interval '1 microsecond', '-infinity')
       AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)
       AND NOT EXISTS (SELECT 1 FROM queen.log_timer_claims c
                        WHERE c.message_id = t.message_id AND c.claimed_until >= now())
     ORDER BY t.deliver_at LIMIT $2 FOR UPDATE SKIP LOCKED) v
LIMIT $2
