DELETE FROM queen.log_txns WHERE partition_id = $1 AND base_offset >= $2 AND base_offset <= $3
