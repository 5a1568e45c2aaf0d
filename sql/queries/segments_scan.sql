-- The segment scan (the same in segments_scan.sql and pop_take_cursor.sql):
-- the segments of a partition holding the offsets from .. from + want, in
-- order, at most a limit of them: the segment covering from (if any is left)
-- and those after it that start inside the range.
SELECT base_offset, end_offset, frame_count, (extract(epoch FROM created_at) * 1000000)::int8 AS created_us, blob
 FROM queen.log_segments
WHERE partition_id = $1 AND base_offset >= COALESCE(
      (SELECT max(base_offset) FROM queen.log_segments
        WHERE partition_id = $1 AND base_offset <= $2), $2)
  AND base_offset < $2 + $4
ORDER BY base_offset LIMIT $3
