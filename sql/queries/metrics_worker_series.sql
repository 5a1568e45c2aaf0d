-- worker_metrics between $1 and $2 in buckets of $3 minutes, for host $4
-- and worker $5 (NULL: any), newest first, one row per bucket.
SELECT (extract(epoch FROM b.bucket) * 1000000)::int8 AS bucket_us,
       sum(push_request_count)::int8 AS push_requests, sum(push_message_count)::int8 AS push_messages,
       sum(pop_request_count)::int8 AS pop_requests, sum(pop_message_count)::int8 AS pop_messages,
       sum(pop_empty_count)::int8 AS pop_empty, sum(ack_request_count)::int8 AS ack_requests,
       sum(ack_success_count)::int8 AS ack_success, sum(ack_failed_count)::int8 AS ack_failed,
       sum(dlq_count)::int8 AS dlq, sum(transaction_count)::int8 AS transactions,
       sum(lag_count)::int8 AS lag_count, sum(lag_sum_ms)::int8 AS lag_sum_ms,
       max(max_lag_ms)::int8 AS max_lag_ms, max(db_connections)::int8 AS db_connections
  FROM queen.worker_metrics w
 CROSS JOIN LATERAL (SELECT to_timestamp(floor(extract(epoch FROM w.bucket_time) / ($3 * 60)) * ($3 * 60)) AS bucket) b
 WHERE w.bucket_time >= $1 AND w.bucket_time <= $2
   AND ($4::text IS NULL OR w.hostname = $4) AND ($5::text IS NULL OR w.worker_id = $5)
 GROUP BY b.bucket ORDER BY b.bucket DESC
