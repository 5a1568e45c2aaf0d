INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES ($1, $2, $3)
ON CONFLICT (partition_id, consumer_group) DO NOTHING
