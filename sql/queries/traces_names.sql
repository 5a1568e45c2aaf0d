-- One page of the trace names, most recently used first, with how many
-- traces and messages each has; traces whose partition is gone are left out.
SELECT n.trace_name,
       count(DISTINCT n.trace_id)::int8 AS trace_count,
       count(DISTINCT (t.partition_id, t.transaction_id))::int8 AS message_count,
       (extract(epoch FROM max(t.created_at)) * 1000000)::int8 AS last_seen_us
  FROM queen.message_trace_names n
  JOIN queen.message_traces t ON t.id = n.trace_id
 WHERE EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.id = t.partition_id)
 GROUP BY n.trace_name
 ORDER BY max(t.created_at) DESC, n.trace_name
 LIMIT $1 OFFSET $2
