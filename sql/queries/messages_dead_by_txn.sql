-- The dead letters of (partition, transaction id), newest first: the offset
-- they point at, and the copy a wide row keeps of its frame.
SELECT d.id, d.message_offset, d.consumer_group, d.error, d.attempts,
       d.message_id::text AS message_id, d.trace_id::text AS trace_id, d.payload,
       (extract(epoch FROM d.created_at) * 1000000)::int8 AS created_us
  FROM queen.log_dlq d
 WHERE d.partition_id = $1 AND d.transaction_id = $2
 ORDER BY d.failed_at DESC, d.id DESC
