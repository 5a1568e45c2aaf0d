SELECT queue, timer_key, partition, payload, transaction_id, message_id::text AS message_id,
       (extract(epoch FROM deliver_at) * 1000000)::int8 AS deliver_us, attempts, last_error,
       (claim_token IS NOT NULL AND claimed_until > now()) AS claimed,
       (extract(epoch FROM created_at) * 1000000)::int8 AS created_us
  FROM queen.log_timers WHERE queue = $1 AND timer_key = $2
