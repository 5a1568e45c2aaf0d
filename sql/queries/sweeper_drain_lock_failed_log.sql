-- A timer whose fire failed, if its newest claim is still token $1 and it
-- is not done: its attempts (the claim's number) and message id, the row
-- locked.
SELECT c.attempt AS attempts, t.message_id
  FROM queen.log_timers t
  JOIN LATERAL (SELECT n.attempt, n.token FROM queen.log_timer_claims n WHERE n.message_id = t.message_id
                 ORDER BY n.attempt DESC LIMIT 1) c ON c.token = $1
 WHERE t.queue = $2 AND t.timer_key = $3
   AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)
   FOR UPDATE OF t
