-- The metrics series' rows older than $1, at most $2 of each series, oldest
-- first (each series' primary key leads with its minute).
WITH q AS (
    DELETE FROM queen.queue_lag_metrics WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM queen.queue_lag_metrics WHERE bucket_time < $1
         ORDER BY bucket_time LIMIT $2))
    RETURNING 1
), w AS (
    DELETE FROM queen.worker_metrics WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM queen.worker_metrics WHERE bucket_time < $1
         ORDER BY bucket_time LIMIT $2))
    RETURNING 1
), s AS (
    DELETE FROM queen.system_metrics WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM queen.system_metrics WHERE bucket_time < $1
         ORDER BY bucket_time LIMIT $2))
    RETURNING 1
)
SELECT (SELECT count(*) FROM q)::int8 AS queues, (SELECT count(*) FROM w)::int8 AS workers,
       (SELECT count(*) FROM s)::int8 AS systems
