UPDATE queen.log_timers AS t
      SET partition = $3, payload = $4, transaction_id = $5, message_id = $7,
          deliver_at = now() + make_interval(secs => $6 / 1000.0),
          claim_token = NULL, claimed_until = NULL, attempts = 0, last_error = NULL
    WHERE queue = $1 AND timer_key = $2
RETURNING (extract(epoch FROM t.deliver_at) * 1000000)::int8 AS deliver_us, true AS existed
