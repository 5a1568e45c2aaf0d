INSERT INTO queen.consumer_groups (queue_id, consumer_group, subscription_mode, subscription_from)
VALUES ($1, $2, $3, $4::timestamptz) ON CONFLICT (queue_id, consumer_group) DO NOTHING
