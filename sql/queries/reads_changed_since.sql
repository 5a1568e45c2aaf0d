-- A page of a queue's partitions last written at or after $2 (epoch
-- microseconds), by (last write, name), after the position ($3, $4)
-- (exclusive; $3 NULL: from the first), at most $5 of them. The last write
-- is the later of the partition row's and its newest segment's, the last
-- offset the end of that segment (log_start - 1 without one).
SELECT p.id, p.name, COALESCE(t.end_offset, p.log_start - 1) AS last_offset, p.log_start,
       (extract(epoch FROM w.last_write_at) * 1000000)::int8 AS last_write_us
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 CROSS JOIN LATERAL (SELECT GREATEST(p.last_write_at, t.created_at) AS last_write_at) w
 WHERE p.queue_id = $1 AND w.last_write_at >= 'epoch'::timestamptz + $2 * interval '1 microsecond'
   AND ($3::int8 IS NULL
        OR (w.last_write_at, p.name) > ('epoch'::timestamptz + $3 * interval '1 microsecond', $4::text))
 ORDER BY w.last_write_at, p.name LIMIT $5
