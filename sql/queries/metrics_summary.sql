-- The totals of GET /metrics: the database server's uptime, the request
-- and message counts producer $1's rows keep, and the connections to the
-- database.
SELECT extract(epoch FROM now() - pg_postmaster_start_time())::int8 AS uptime_s,
       COALESCE((SELECT sum(push_request_count + pop_request_count + ack_request_count)
                   FROM queen.worker_metrics WHERE worker_id = $1), 0)::int8 AS requests,
       COALESCE((SELECT sum(push_message_count) FROM queen.worker_metrics
                  WHERE worker_id = $1), 0)::int8 AS messages,
       (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database())::int8 AS connections,
       (SELECT count(*) FROM pg_stat_activity
         WHERE datname = current_database() AND state LIKE 'idle%')::int8 AS idle
