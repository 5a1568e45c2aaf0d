SELECT base_offset, end_offset, frame_count, created_at FROM queen.log_segments
WHERE partition_id = $1 AND base_offset >= $2 AND end_offset < $3
ORDER BY base_offset LIMIT $4 FOR UPDATE SKIP LOCKED
