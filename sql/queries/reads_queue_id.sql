SELECT id FROM queen.queues WHERE tenant_id = $1 AND name = $2
