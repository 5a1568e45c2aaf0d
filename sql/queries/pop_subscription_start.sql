SELECT CASE subscription_mode WHEN 'all' THEN NULL
                           WHEN 'new' THEN created_at
                           ELSE subscription_from END AS since
FROM queen.consumer_groups WHERE queue_id = $1 AND consumer_group = $2
