SELECT 1 FROM queen.log_cursors WHERE partition_id = $1 AND consumer_group = $2
