-- pop_subscribe for a pop that asks for conflation: the group registers as
-- conflating.
INSERT INTO queen.consumer_groups (queue_id, consumer_group, subscription_mode, subscription_from, conflation)
VALUES ($1, $2, $3, $4::timestamptz, true) ON CONFLICT (queue_id, consumer_group) DO NOTHING
