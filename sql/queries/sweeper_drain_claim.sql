-- Picks up to $2 due, claimable timers, shard by shard from shard $1 on,
-- locking them and skipping rows another sweeper holds. The claim stamps
-- them next, by key (sweeper_drain_claim_stamp.sql): updated here, joined
-- back to the picks, the planner may hash the whole table for a batch it
-- expects to be large.
SELECT v.queue, v.timer_key FROM generate_series(0, 63) AS g(i)
CROSS JOIN LATERAL (
    SELECT queue, timer_key FROM queen.log_timers
     WHERE shard = ((($1 + g.i) % 64 + 64) % 64)::smallint AND deliver_at <= now()
       AND (claimed_until IS NULL OR claimed_until < now())
     ORDER BY deliver_at LIMIT $2 FOR UPDATE SKIP LOCKED) v
LIMIT $2
