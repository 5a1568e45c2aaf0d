SELECT id FROM queen.log_cursors WHERE partition_id = ANY($1)
