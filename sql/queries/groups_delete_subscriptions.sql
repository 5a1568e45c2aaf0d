DELETE FROM queen.consumer_groups WHERE consumer_group = $1 AND ($2::int8 IS NULL OR queue_id = $2) RETURNING 1
