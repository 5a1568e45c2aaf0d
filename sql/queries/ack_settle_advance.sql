UPDATE queen.log_consumers SET committed = $3, lease_state = $4
WHERE partition_id = $1 AND consumer_group = $2
