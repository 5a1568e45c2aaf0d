SELECT COALESCE(sum(segments), 0)::int8, COALESCE(sum(messages), 0)::int8,
     COALESCE(sum(txns), 0)::int8, COALESCE(sum(evicted), 0)::int8, string_agg(error, '; '),
     COALESCE(sum(failed), 0)::int8,
     COALESCE((SELECT array_agg(f) FROM queen.retention_work_done d, unnest(d.failing) f
                WHERE d.token = $1), '{}')
FROM queen.retention_work_done WHERE token = $1
