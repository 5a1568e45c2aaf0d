-- A page of a queue's partitions by name, after name $2 (exclusive; NULL:
-- from the first), at most $3 of them. No name is empty, so '' stands for
-- NULL and the bound stays a condition of the index: as
-- ($2 IS NULL OR name > $2), every page read all the names before it. The
-- last offset and last write come from the partition's newest segment.
SELECT p.id, p.name, COALESCE(t.end_offset, p.log_start - 1) AS last_offset, p.log_start,
       (extract(epoch FROM GREATEST(p.last_write_at, t.created_at)) * 1000000)::int8 AS last_write_us
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE p.queue_id = $1 AND p.name > COALESCE($2::text, '')
 ORDER BY p.name LIMIT $3
