SELECT d.id FROM queen.log_dlq d WHERE d.partition_id = $1 AND d.transaction_id = $2
ORDER BY d.failed_at DESC, d.id DESC LIMIT 1
