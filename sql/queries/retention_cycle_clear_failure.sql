DELETE FROM queen.retention_failures WHERE partition_id = $1 AND phase = $2
