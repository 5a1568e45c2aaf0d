-- Adds one sample's server-wide totals ($3, a JSON record) to the minute's
-- row of producer ($1 host, $2 worker id), with the database's connections.
INSERT INTO queen.worker_metrics AS m (
       bucket_time, hostname, worker_id, pid, push_request_count, push_message_count,
       pop_request_count, pop_message_count, pop_empty_count, ack_request_count,
       ack_success_count, ack_failed_count, dlq_count, transaction_count,
       lag_count, lag_sum_ms, max_lag_ms, db_connections)
SELECT date_trunc('minute', now()), $1, $2, pg_backend_pid(), u.push_request_count,
       u.push_message_count, u.pop_request_count, u.pop_message_count, u.pop_empty_count,
       u.ack_request_count, u.ack_success_count, u.ack_failed_count, u.dlq_count,
       u.transaction_count, u.lag_count, u.lag_sum_ms, u.max_lag_ms,
       (SELECT count(*)::int4 FROM pg_stat_activity WHERE datname = current_database())
  FROM jsonb_to_record($3) AS u(
       push_request_count int8, push_message_count int8, pop_request_count int8,
       pop_message_count int8, pop_empty_count int8, ack_request_count int8,
       ack_success_count int8, ack_failed_count int8, dlq_count int8,
       transaction_count int8, lag_count int8, lag_sum_ms int8, max_lag_ms int8)
ON CONFLICT (bucket_time, hostname, worker_id) DO UPDATE SET
       pid = EXCLUDED.pid,
       push_request_count = m.push_request_count + EXCLUDED.push_request_count,
       push_message_count = m.push_message_count + EXCLUDED.push_message_count,
       pop_request_count = m.pop_request_count + EXCLUDED.pop_request_count,
       pop_message_count = m.pop_message_count + EXCLUDED.pop_message_count,
       pop_empty_count = m.pop_empty_count + EXCLUDED.pop_empty_count,
       ack_request_count = m.ack_request_count + EXCLUDED.ack_request_count,
       ack_success_count = m.ack_success_count + EXCLUDED.ack_success_count,
       ack_failed_count = m.ack_failed_count + EXCLUDED.ack_failed_count,
       dlq_count = m.dlq_count + EXCLUDED.dlq_count,
       transaction_count = m.transaction_count + EXCLUDED.transaction_count,
       lag_count = m.lag_count + EXCLUDED.lag_count,
       lag_sum_ms = m.lag_sum_ms + EXCLUDED.lag_sum_ms,
       max_lag_ms = GREATEST(m.max_lag_ms, EXCLUDED.max_lag_ms),
       db_connections = EXCLUDED.db_connections
RETURNING 1 AS written
