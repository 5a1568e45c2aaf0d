SELECT id, to_jsonb(q) FROM queen.queues q WHERE tenant_id = $1 AND name = $2
