SELECT 1 FROM queen.consumer_groups WHERE queue_id = $1 AND consumer_group = $2
