-- KV rows and timers stored, with their bytes as stored.
SELECT (SELECT count(*) FROM queen.kv)::int8 AS kv_rows,
       (SELECT COALESCE(sum(pg_column_size(k.*)), 0) FROM queen.kv k)::int8 AS kv_bytes,
       (SELECT count(*) FROM queen.log_timers)::int8 AS timer_rows,
       (SELECT COALESCE(sum(pg_column_size(t.*)), 0) FROM queen.log_timers t)::int8 AS timer_bytes
