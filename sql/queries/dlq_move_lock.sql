SELECT d.id, q.name AS queue, p.name AS partition, d.partition_id, d.consumer_group, d.message_offset,
     d.transaction_id, d.message_id::text AS message_id, d.trace_id::text AS trace_id, d.payload, d.error, d.attempts,
     (extract(epoch FROM d.failed_at) * 1000000)::int8 AS failed_us,
     (extract(epoch FROM d.created_at) * 1000000)::int8 AS created_us
FROM queen.log_dlq d
JOIN queen.log_partitions p ON p.id = d.partition_id
JOIN queen.queues q ON q.id = d.queue_id
WHERE d.id = $1
FOR UPDATE OF d
