-- Records error $3 on the claim $2 of schedule $1: it keeps the timer until
-- the claim expires.
UPDATE queen.log_timer_claims SET error = $3 WHERE message_id = $1 AND attempt = $2
