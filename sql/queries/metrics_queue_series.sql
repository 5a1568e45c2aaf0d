-- queue_lag_metrics between $1 and $2 in buckets of $3 minutes, summed
-- over consumer groups, per queue matching $4 queue, $5 namespace, $6 task
-- (NULL: any); newest first.
SELECT (extract(epoch FROM b.bucket) * 1000000)::int8 AS bucket_us, q.name AS queue,
       sum(m.push_request_count)::int8 AS push_requests, sum(m.push_message_count)::int8 AS push_messages,
       sum(m.pop_request_count)::int8 AS pop_requests, sum(m.pop_message_count)::int8 AS pop_messages,
       sum(m.pop_empty_count)::int8 AS pop_empty, sum(m.ack_request_count)::int8 AS ack_requests,
       sum(m.ack_success_count)::int8 AS ack_success, sum(m.ack_failed_count)::int8 AS ack_failed,
       sum(m.dlq_count)::int8 AS dlq, sum(m.transaction_count)::int8 AS transactions,
       sum(m.lag_count)::int8 AS lag_count, sum(m.lag_sum_ms)::int8 AS lag_sum_ms,
       max(m.max_lag_ms)::int8 AS max_lag_ms,
       (SELECT count(*) FROM queen.log_partitions p WHERE p.queue_id = q.id)::int8 AS partition_count
  FROM queen.queue_lag_metrics m
  JOIN queen.queues q ON q.id = m.queue_id
 CROSS JOIN LATERAL (SELECT to_timestamp(floor(extract(epoch FROM m.bucket_time) / ($3 * 60)) * ($3 * 60)) AS bucket) b
 WHERE m.bucket_time >= $1 AND m.bucket_time <= $2
   AND ($4::text IS NULL OR q.name = $4) AND ($5::text IS NULL OR q.namespace = $5)
   AND ($6::text IS NULL OR q.task = $6)
 GROUP BY b.bucket, q.id, q.name ORDER BY b.bucket DESC, q.name
