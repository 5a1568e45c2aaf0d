SELECT name, id, dedup_window_seconds FROM queen.queues WHERE tenant_id = $1 AND name = ANY($2)
