-- Deletes the fired timers of keys ($2[k], $3[k]) claimed under token $1,
-- which the fire holds locked: each key probed on its own, the rows
-- deleted by address (as sweeper_drain_claim_stamp.sql updates them).
DELETE FROM queen.log_timers t
 WHERE t.ctid = ANY (ARRAY(
       SELECT x.ctid FROM unnest($2::text[], $3::text[]) AS f(queue, timer_key)
        CROSS JOIN LATERAL (SELECT l.ctid FROM queen.log_timers l
                             WHERE l.queue = f.queue AND l.timer_key = f.timer_key
                               AND l.claim_token = $1 OFFSET 0) x))
