-- Adds one front-end's figures ($4, a JSON record of every count, checked)
-- to the minute's row of producer ($1 host, $2 worker id), with its process
-- id ($3) and its database connections; answers the row as it now stands.
INSERT INTO queen.worker_metrics AS m (
       bucket_time, hostname, worker_id, pid, push_request_count, push_message_count,
       pop_request_count, pop_message_count, pop_empty_count, ack_request_count,
       ack_success_count, ack_failed_count, dlq_count, transaction_count, db_connections)
SELECT date_trunc('minute', now()), $1, $2, $3, u.push_request_count,
       u.push_message_count, u.pop_request_count, u.pop_message_count, u.pop_empty_count,
       u.ack_request_count, u.ack_success_count, u.ack_failed_count, u.dlq_count,
       u.transaction_count, u.db_connections
  FROM jsonb_to_record($4) AS u(
       push_request_count int8, push_message_count int8, pop_request_count int8,
       pop_message_count int8, pop_empty_count int8, ack_request_count int8,
       ack_success_count int8, ack_failed_count int8, dlq_count int8,
       transaction_count int8, db_connections int4)
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
       db_connections = EXCLUDED.db_connections
RETURNING (extract(epoch FROM m.bucket_time) * 1000000)::int8 AS bucket_us,
       m.pid AS pid, m.push_request_count AS push_request_count,
       m.push_message_count AS push_message_count, m.pop_request_count AS pop_request_count,
       m.pop_message_count AS pop_message_count, m.pop_empty_count AS pop_empty_count,
       m.ack_request_count AS ack_request_count, m.ack_success_count AS ack_success_count,
       m.ack_failed_count AS ack_failed_count, m.dlq_count AS dlq_count,
       m.transaction_count AS transaction_count, m.db_connections::int8 AS db_connections
