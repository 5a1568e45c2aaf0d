-- The traces of one message, oldest first, at most a limit of them.
SELECT t.id::text AS id, t.event_type, t.data::text AS data, t.consumer_group, t.worker_id,
       (extract(epoch FROM t.created_at) * 1000000)::int8 AS created_us,
       ARRAY(SELECT n.trace_name FROM queen.message_trace_names n
              WHERE n.trace_id = t.id ORDER BY n.trace_name) AS trace_names
  FROM queen.message_traces t
 WHERE t.partition_id = $1 AND t.transaction_id = $2
 ORDER BY t.created_at, t.id
 LIMIT $3
