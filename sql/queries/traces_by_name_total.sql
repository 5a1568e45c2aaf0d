-- How many traces are filed under a name (those of live partitions).
SELECT count(*)::int8 AS total
  FROM queen.message_trace_names n
  JOIN queen.message_traces t ON t.id = n.trace_id
 WHERE n.trace_name = $1
   AND EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.id = t.partition_id)
