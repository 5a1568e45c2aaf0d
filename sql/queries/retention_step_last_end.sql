SELECT end_offset FROM queen.log_segments WHERE partition_id = $1 ORDER BY base_offset DESC LIMIT 1
