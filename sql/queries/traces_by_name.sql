-- One page of the traces filed under a name, oldest first; traces whose
-- partition is gone are left out.
SELECT t.id::text AS id, t.transaction_id, t.partition_id, t.event_type, t.data::text AS data,
       t.consumer_group, t.worker_id,
       (extract(epoch FROM t.created_at) * 1000000)::int8 AS created_us,
       q.name AS queue_name, p.name AS partition_name,
       ARRAY(SELECT n2.trace_name FROM queen.message_trace_names n2
              WHERE n2.trace_id = t.id ORDER BY n2.trace_name) AS trace_names
  FROM queen.message_trace_names n
  JOIN queen.message_traces t ON t.id = n.trace_id
  JOIN queen.log_partitions p ON p.id = t.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE n.trace_name = $1
 ORDER BY n.created_at, n.trace_id
 LIMIT $2 OFFSET $3
