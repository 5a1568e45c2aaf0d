SELECT COALESCE(sum(segments), 0)::int8 AS segments, COALESCE(sum(messages), 0)::int8 AS messages,
       COALESCE(sum(txns), 0)::int8 AS txns, COALESCE(sum(evicted), 0)::int8 AS evicted,
       string_agg(error, '; ') AS errors, COALESCE(sum(failed), 0)::int8 AS failed,
       COALESCE((SELECT array_agg(f) FROM queen.retention_work_done d, unnest(d.failing) f
                  WHERE d.token = $1), '{}') AS failing
FROM queen.retention_work_done WHERE token = $1
