-- Claims up to $2 due, claimable timers for token $3 and $4 ms, shard by
-- shard from shard $1 on, skipping rows another sweeper holds; answers the
-- keys claimed. The picked rows are updated by their row addresses (held
-- locked since they were picked): joined back by key, the planner may hash
-- the whole table for a batch it expects to be large.
WITH picked AS (
    SELECT v.ctid AS row FROM generate_series(0, 63) AS g(i)
    CROSS JOIN LATERAL (
        SELECT ctid FROM queen.log_timers
         WHERE shard = ((($1 + g.i) % 64 + 64) % 64)::smallint AND deliver_at <= now()
           AND (claimed_until IS NULL OR claimed_until < now())
         ORDER BY deliver_at LIMIT $2 FOR UPDATE SKIP LOCKED) v
    LIMIT $2)
UPDATE queen.log_timers t
   SET claim_token = $3, claimed_until = now() + make_interval(secs => $4 / 1000.0), attempts = t.attempts + 1
 WHERE t.ctid = ANY (ARRAY(SELECT row FROM picked))
RETURNING t.queue, t.timer_key
