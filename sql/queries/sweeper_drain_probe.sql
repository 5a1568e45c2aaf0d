-- The next due instant (ms from now) and how many timers are due and
-- claimable, at most $1: 64 single-row seeks for the first, and for the
-- second a bounded range of each shard's due rows (a count over the whole
-- table's deliver_at, with no shard given, read the whole index).
SELECT (extract(epoch FROM min(m) - now()) * 1000)::int8 AS next_in_ms,
     (SELECT count(*)::int8 FROM (
        SELECT 1 FROM generate_series(0, 63) g(i)
        CROSS JOIN LATERAL (
            SELECT 1 FROM queen.log_timers t
             WHERE t.shard = g.i::smallint AND t.deliver_at <= now()
               AND (t.claimed_until IS NULL OR t.claimed_until < now()) LIMIT $1) d
        LIMIT $1) d) AS due
FROM (SELECT (SELECT min(t.deliver_at) FROM queen.log_timers t WHERE t.shard = s) AS m
        FROM generate_series(0, 63) s) x
