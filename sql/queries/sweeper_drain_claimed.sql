SELECT queue, timer_key FROM queen.log_timers WHERE claim_token = $1 ORDER BY queue, timer_key
