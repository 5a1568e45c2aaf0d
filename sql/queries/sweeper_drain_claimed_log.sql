-- The timers whose newest claim is token $1, in key order: a scan of the
-- claims (no index serves the token), for queen_internal.sweeper_fire_v1,
-- which is given a token alone.
SELECT t.queue, t.timer_key
  FROM queen.log_timer_claims c JOIN queen.log_timers t ON t.message_id = c.message_id
 WHERE c.token = $1
   AND c.attempt = (SELECT max(n.attempt) FROM queen.log_timer_claims n WHERE n.message_id = c.message_id)
 ORDER BY t.queue, t.timer_key
