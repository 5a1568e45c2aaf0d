-- Whether schedule $1 (a message id) has fired.
SELECT EXISTS (SELECT 1 FROM queen.log_timers_done WHERE message_id = $1) AS done
