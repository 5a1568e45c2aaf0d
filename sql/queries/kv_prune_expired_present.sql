SELECT coalesce(sum(n), 0)::int8 AS present FROM generate_series(0, 63) AS g(i)
CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM (
        SELECT 1 FROM queen.kv k
         WHERE k.shard = g.i::smallint AND k.expires_at < 'infinity'
           AND k.expires_at <= statement_timestamp() AND k.expires_at > '-infinity'
         LIMIT $1) x) y
