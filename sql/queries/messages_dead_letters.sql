-- The dead letters of a partition at some offsets, newest failure first.
SELECT d.message_offset, d.consumer_group, d.error, d.attempts
  FROM queen.log_dlq d
 WHERE d.partition_id = $1 AND d.message_offset = ANY ($2)
 ORDER BY d.failed_at DESC, d.id DESC
