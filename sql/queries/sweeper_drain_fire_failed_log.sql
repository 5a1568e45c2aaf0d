-- Sets aside the timer of schedule $1 (held locked) after $2 attempts,
-- with error $3: moved to queen.log_timers_failed, its claims deleted.
WITH aside AS (
    DELETE FROM queen.log_timers WHERE message_id = $1
    RETURNING queue, timer_key, partition, payload, transaction_id, message_id, deliver_at, created_at),
claims AS (DELETE FROM queen.log_timer_claims WHERE message_id = $1)
INSERT INTO queen.log_timers_failed
       (queue, timer_key, partition, payload, transaction_id, message_id, deliver_at, attempts, last_error, created_at)
SELECT queue, timer_key, partition, payload, transaction_id, message_id, deliver_at, $2, $3, created_at
  FROM aside
