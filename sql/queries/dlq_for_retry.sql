SELECT count(*)::int8 AS matched FROM (SELECT 1 FROM queen.log_dlq d WHERE d.queue_id = $1
AND ($2::text IS NULL OR d.consumer_group = $2) LIMIT $3) m
