-- Locks the timer (queue $1, key $2), if there is one, for a schedule, a
-- reschedule or a cancel: its schedule's message id. Whether it is done is
-- read next (timers_done.sql), after the lock: a fire holding it marks it
-- done before it lets go.
SELECT message_id FROM queen.log_timers WHERE queue = $1 AND timer_key = $2 FOR UPDATE
