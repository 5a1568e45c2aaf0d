SELECT c.consumer_group, q.name AS queue, count(*)::int8 AS partitions,
      COALESCE(sum(GREATEST(COALESCE(t.end_offset, p.log_start - 1) - GREATEST(c.committed, p.log_start - 1), 0)), 0)::int8 AS lag
 FROM queen.log_consumers c
 JOIN queen.log_partitions p ON p.id = c.partition_id
 JOIN queen.queues q ON q.id = p.queue_id
 LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                     WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
WHERE c.consumer_group <> $1
GROUP BY 1, 2 ORDER BY 1, 2
