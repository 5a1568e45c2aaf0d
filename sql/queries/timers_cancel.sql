DELETE FROM queen.log_timers WHERE queue = $1 AND timer_key = $2 RETURNING 1
