SELECT min(committed) + 1 FROM queen.log_consumers WHERE partition_id = $1
