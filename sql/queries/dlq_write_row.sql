INSERT INTO queen.log_dlq (queue_id, partition_id, consumer_group, message_offset, transaction_id, error, attempts)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (partition_id, consumer_group, message_offset)
DO UPDATE SET error = EXCLUDED.error, attempts = EXCLUDED.attempts, failed_at = now()
