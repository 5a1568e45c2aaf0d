SELECT json_build_object('queue', queue, 'timerKey', timer_key, 'partition', partition,
          'transactionId', transaction_id, 'messageId', message_id, 'deliverAt', deliver_at,
          'attempts', attempts, 'error', last_error, 'failedAt', failed_at,
          'payload', encode(payload, 'base64'))::text AS timer
 FROM queen.log_timers_failed WHERE $1::text IS NULL OR queue = $1
ORDER BY failed_at DESC, id DESC LIMIT $2
