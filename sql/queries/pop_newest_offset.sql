-- The newest offset of partition $1 written at or before $2 (any when
-- NULL): the end of its newest such segment.
SELECT end_offset
  FROM queen.log_segments
 WHERE partition_id = $1
   AND ($2::timestamptz IS NULL OR created_at <= $2)
 ORDER BY base_offset DESC
 LIMIT 1
