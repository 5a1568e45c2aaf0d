-- One trace and the names it is filed under, in one statement.
WITH t AS (
    INSERT INTO queen.message_traces (id, partition_id, transaction_id, consumer_group, event_type, data, worker_id)
    VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
    RETURNING id, created_at),
n AS (
    INSERT INTO queen.message_trace_names (trace_id, trace_name, created_at)
    SELECT t.id, u.name, t.created_at FROM t, unnest($8::text[]) AS u(name)
    RETURNING 1)
SELECT t.id::text AS trace_id, (SELECT count(*) FROM n)::int8 AS names FROM t
