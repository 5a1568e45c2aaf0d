-- A page of a queue's partitions last written at or after $2 (epoch
-- microseconds), by (last write, name), after the position ($3, $4)
-- (exclusive; $3 NULL: from the first), at most $5 of them.
SELECT id, name, last_offset, log_start, (extract(epoch FROM last_write_at) * 1000000)::int8 AS last_write_us
  FROM queen.log_partitions
 WHERE queue_id = $1 AND last_write_at >= 'epoch'::timestamptz + $2 * interval '1 microsecond'
   AND ($3::int8 IS NULL
        OR (last_write_at, name) > ('epoch'::timestamptz + $3 * interval '1 microsecond', $4::text))
 ORDER BY last_write_at, name LIMIT $5
