SELECT count(*)::int8 AS segments, COALESCE(sum(frame_count), 0)::int8 AS messages FROM queen.log_segments
WHERE partition_id = $1 AND base_offset >= $2 AND end_offset < $3
