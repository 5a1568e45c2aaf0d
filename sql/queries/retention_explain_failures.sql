SELECT phase, sqlstate, error, (extract(epoch FROM failed_at) * 1000000)::int8 AS failed_us, skip, streak
FROM queen.retention_failures WHERE partition_id = $1 AND phase < $2 ORDER BY phase
