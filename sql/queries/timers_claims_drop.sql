-- Deletes the claims of schedule $1 (a message id), replaced or cancelled.
DELETE FROM queen.log_timer_claims WHERE message_id = $1
