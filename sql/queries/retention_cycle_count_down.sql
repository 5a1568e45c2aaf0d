UPDATE queen.retention_backoff SET skip = skip - 1 WHERE partition_id = ANY($1) AND skip > 0 RETURNING partition_id
