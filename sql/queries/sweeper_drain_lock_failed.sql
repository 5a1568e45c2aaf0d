SELECT attempts FROM queen.log_timers WHERE claim_token = $1 AND queue = $2 AND timer_key = $3 FOR UPDATE
