-- Per producer of figures between $1 and $2 (host $3, worker $4; NULL:
-- any): its totals and when it last wrote.
SELECT hostname, worker_id,
       sum(push_message_count)::int8 AS push_messages, sum(pop_message_count)::int8 AS pop_messages,
       sum(ack_success_count + ack_failed_count)::int8 AS ack_messages,
       sum(push_request_count)::int8 AS push_requests, sum(pop_request_count)::int8 AS pop_requests,
       sum(ack_request_count)::int8 AS ack_requests, sum(ack_failed_count)::int8 AS ack_failed,
       sum(dlq_count)::int8 AS dlq, sum(lag_count)::int8 AS lag_count,
       sum(lag_sum_ms)::int8 AS lag_sum_ms, max(max_lag_ms)::int8 AS max_lag_ms,
       (array_agg(db_connections ORDER BY bucket_time DESC))[1]::int8 AS db_connections,
       (extract(epoch FROM max(bucket_time)) * 1000000)::int8 AS last_seen_us
  FROM queen.worker_metrics
 WHERE bucket_time >= $1 AND bucket_time <= $2
   AND ($3::text IS NULL OR hostname = $3) AND ($4::text IS NULL OR worker_id = $4)
 GROUP BY hostname, worker_id ORDER BY hostname, worker_id
