SELECT id, name, namespace, task, priority, lease_time, retry_limit, retry_delay,
       retention_seconds, max_queue_size, dead_letter_queue,
       (extract(epoch FROM created_at) * 1000000)::int8 AS created_us
  FROM queen.queues WHERE tenant_id = $1 AND name = $2
