-- A page of a queue's partitions by name, after name $2 (exclusive; NULL:
-- from the first), at most $3 of them.
SELECT id, name, last_offset, log_start, (extract(epoch FROM last_write_at) * 1000000)::int8 AS last_write_us
  FROM queen.log_partitions
 WHERE queue_id = $1 AND ($2::text IS NULL OR name > $2)
 ORDER BY name LIMIT $3
