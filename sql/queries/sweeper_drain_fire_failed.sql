WITH aside AS (
    DELETE FROM queen.log_timers WHERE claim_token = $1 AND queue = $2 AND timer_key = $3
    RETURNING queue, timer_key, partition, payload, transaction_id, message_id, deliver_at, attempts, created_at)
INSERT INTO queen.log_timers_failed
       (queue, timer_key, partition, payload, transaction_id, message_id, deliver_at, attempts, last_error, created_at)
SELECT queue, timer_key, partition, payload, transaction_id, message_id, deliver_at, attempts, $4, created_at
  FROM aside
