SELECT end_offset FROM queen.log_segments WHERE partition_id = $1 AND base_offset <= $2
ORDER BY base_offset DESC LIMIT 1 FOR SHARE
