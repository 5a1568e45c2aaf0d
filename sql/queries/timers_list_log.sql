-- A queue's timers that have not fired, by key in byte order, after key
-- $2 (exclusive; NULL: from the first), at most $3 of them, each with its
-- newest claim.
SELECT t.queue, t.timer_key, t.partition, t.transaction_id, t.message_id::text AS message_id,
       (extract(epoch FROM t.deliver_at) * 1000000)::int8 AS deliver_us,
       COALESCE(c.attempt, 0) AS attempts, c.error AS last_error, COALESCE(c.claimed_until > now(), false) AS claimed,
       (extract(epoch FROM t.created_at) * 1000000)::int8 AS created_us
  FROM queen.log_timers t
  LEFT JOIN LATERAL (SELECT n.attempt, n.error, n.claimed_until FROM queen.log_timer_claims n
                      WHERE n.message_id = t.message_id ORDER BY n.attempt DESC LIMIT 1) c ON true
 WHERE t.queue = $1 AND ($2::text IS NULL OR t.timer_key > $2)
   AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)
 ORDER BY t.timer_key LIMIT $3
