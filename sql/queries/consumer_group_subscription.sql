UPDATE queen.consumer_groups SET subscription_mode = 'timestamp', subscription_from = $2::timestamptz
WHERE consumer_group = $1 RETURNING 1
