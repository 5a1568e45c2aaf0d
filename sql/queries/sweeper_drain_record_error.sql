UPDATE queen.log_timers SET last_error = $4 WHERE claim_token = $1 AND queue = $2 AND timer_key = $3
