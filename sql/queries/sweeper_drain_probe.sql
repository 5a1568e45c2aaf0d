SELECT (extract(epoch FROM min(m) - now()) * 1000)::int8 AS next_in_ms,
     (SELECT count(*)::int8 FROM (SELECT 1 FROM queen.log_timers
        WHERE deliver_at <= now() AND (claimed_until IS NULL OR claimed_until < now()) LIMIT $1) d) AS due
FROM (SELECT (SELECT min(t.deliver_at) FROM queen.log_timers t WHERE t.shard = s) AS m
        FROM generate_series(0, 63) s) x
