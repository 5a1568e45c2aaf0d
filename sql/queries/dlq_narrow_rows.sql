SELECT id, message_offset FROM queen.log_dlq
WHERE partition_id = $1 AND message_offset BETWEEN $2 AND $3 AND created_at IS NULL
