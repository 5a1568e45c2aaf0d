SELECT queue, timer_key, partition, payload, transaction_id,
      GREATEST((extract(epoch FROM now() - deliver_at) * 1000)::int8, 0) AS lateness_ms, message_id
 FROM queen.log_timers WHERE claim_token = $1 AND ($2::text IS NULL OR (queue = $2 AND timer_key = $3))
ORDER BY queue, timer_key FOR UPDATE
