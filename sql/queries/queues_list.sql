SELECT q.name, q.namespace, q.task, (extract(epoch FROM q.created_at) * 1000000)::int8 AS created_us,
      count(p.id)::int8 AS partitions,
      COALESCE(sum(COALESCE(t.end_offset, p.log_start - 1) + 1 - p.log_start), 0)::int8 AS messages,
      (SELECT count(*)::int8 FROM queen.log_dlq d WHERE d.queue_id = q.id) AS failed,
      COALESCE((SELECT r.pruned_failed_count FROM queen.queue_terminal_rollups r WHERE r.queue_id = q.id), 0) AS pruned_failed
 FROM queen.queues q LEFT JOIN queen.log_partitions p ON p.queue_id = q.id
 LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                     WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
GROUP BY q.id ORDER BY q.name
