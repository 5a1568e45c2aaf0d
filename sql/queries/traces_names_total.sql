-- How many trace names there are (over the traces of live partitions).
SELECT count(DISTINCT n.trace_name)::int8 AS total
  FROM queen.message_trace_names n
  JOIN queen.message_traces t ON t.id = n.trace_id
 WHERE EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.id = t.partition_id)
