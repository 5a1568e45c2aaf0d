-- Per queue and consumer group between $1 and $2 (queue $3; NULL: any):
-- messages popped and the lag the pops saw.
SELECT q.name AS queue, m.consumer_group, sum(m.pop_message_count)::int8 AS pop_messages,
       sum(m.lag_count)::int8 AS lag_count, sum(m.lag_sum_ms)::int8 AS lag_sum_ms,
       max(m.max_lag_ms)::int8 AS max_lag_ms
  FROM queen.queue_lag_metrics m
  JOIN queen.queues q ON q.id = m.queue_id
 WHERE m.bucket_time >= $1 AND m.bucket_time <= $2 AND ($3::text IS NULL OR q.name = $3)
   AND m.consumer_group <> ''
 GROUP BY q.name, m.consumer_group ORDER BY q.name, m.consumer_group
