SELECT base_offset, end_offset, frame_count, (extract(epoch FROM created_at) * 1000000)::int8, blob FROM queen.log_segments WHERE partition_id = $1 AND base_offset = ANY($2) ORDER BY base_offset
