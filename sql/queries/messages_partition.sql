-- A partition and its queue, as the message readers name them; its last
-- offset is the end of its newest segment (log_start - 1 without one).
SELECT p.id, p.name AS partition, p.log_start, COALESCE(t.end_offset, p.log_start - 1) AS last_offset,
       q.id AS queue_id, q.name AS queue, q.namespace, q.task, q.priority
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE p.id = $1
