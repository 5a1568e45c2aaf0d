SELECT d.id, q.name AS queue, p.name AS partition, d.partition_id, d.consumer_group, d.message_offset,
     d.transaction_id, d.message_id::text AS message_id, d.trace_id::text AS trace_id, d.payload, d.error, d.attempts,
     (extract(epoch FROM d.failed_at) * 1000000)::int8 AS failed_us,
     (extract(epoch FROM d.created_at) * 1000000)::int8 AS created_us
FROM queen.log_dlq d
JOIN queen.log_partitions p ON p.id = d.partition_id
JOIN queen.queues q ON q.id = d.queue_id
WHERE ($1::int8 IS NULL OR d.queue_id = $1) AND ($2::text IS NULL OR d.consumer_group = $2)
  AND ($3::timestamptz IS NULL OR d.failed_at >= $3) AND ($4::timestamptz IS NULL OR d.failed_at < $4)
  AND ($5::text IS NULL OR p.name = $5)
ORDER BY d.failed_at DESC, d.id DESC LIMIT $6 OFFSET $7
