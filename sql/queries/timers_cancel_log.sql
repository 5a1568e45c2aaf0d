-- Cancels the timer (queue $1, key $2), locked and not done.
DELETE FROM queen.log_timers WHERE queue = $1 AND timer_key = $2
