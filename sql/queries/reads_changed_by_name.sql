-- A page of a queue's partitions by name, after name $2 (exclusive; NULL:
-- from the first), at most $3 of them. No name is empty, so '' stands for
-- NULL and the bound stays a condition of the index: as
-- ($2 IS NULL OR name > $2), every page read all the names before it.
SELECT id, name, last_offset, log_start, (extract(epoch FROM last_write_at) * 1000000)::int8 AS last_write_us
  FROM queen.log_partitions
 WHERE queue_id = $1 AND name > COALESCE($2::text, '')
 ORDER BY name LIMIT $3
