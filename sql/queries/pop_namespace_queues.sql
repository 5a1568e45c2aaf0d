SELECT id AS queue_id, name AS queue, window_buffer, delayed_processing, lease_time FROM queen.queues
WHERE tenant_id = $1 AND ($2::text IS NULL OR namespace = $2) AND ($3::text IS NULL OR task = $3)
ORDER BY priority DESC, id
