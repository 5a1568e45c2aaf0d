INSERT INTO queen.log_timers AS t (queue, timer_key, partition, payload, transaction_id, message_id, deliver_at)
VALUES ($1, $2, $3, $4, $5, $7, now() + make_interval(secs => $6 / 1000.0))
ON CONFLICT (queue, timer_key) DO UPDATE
   SET partition = EXCLUDED.partition, payload = EXCLUDED.payload, transaction_id = EXCLUDED.transaction_id,
       message_id = EXCLUDED.message_id, deliver_at = EXCLUDED.deliver_at,
       claim_token = NULL, claimed_until = NULL, attempts = 0, last_error = NULL
RETURNING (extract(epoch FROM t.deliver_at) * 1000000)::int8 AS deliver_us, (xmax <> 0) AS existed
