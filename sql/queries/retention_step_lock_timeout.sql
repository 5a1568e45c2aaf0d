-- Sets lock_timeout for the rest of the transaction (or subtransaction);
-- answers the value it had.
SELECT current_setting('lock_timeout') AS before, set_config('lock_timeout', $1, true) AS now
