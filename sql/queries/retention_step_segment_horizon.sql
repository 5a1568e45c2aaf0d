SELECT base_offset FROM queen.log_segments WHERE partition_id = $1 AND base_offset >= $2
ORDER BY base_offset OFFSET $3 LIMIT 1
