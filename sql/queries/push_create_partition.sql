INSERT INTO queen.log_partitions (queue_id, name) VALUES ($1, $2) ON CONFLICT (queue_id, name) DO NOTHING
