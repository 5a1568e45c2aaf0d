SELECT id, name, last_offset, log_start, (extract(epoch FROM last_write_at) * 1000000)::int8 AS last_write_us
FROM queen.log_partitions WHERE queue_id = $1 ORDER BY name LIMIT $2
