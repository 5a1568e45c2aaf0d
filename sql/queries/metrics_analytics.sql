-- Messages pushed per bucket ($3: minute, hour or day) from $1 to $2, every
-- bucket (empty ones 0), for the queues matching $4 queue, $5 namespace, $6
-- task (NULL: any); oldest first.
WITH b AS (
    SELECT generate_series(date_trunc($3, $1), date_trunc($3, $2), ('1 ' || $3)::interval) AS bucket
), m AS (
    SELECT date_trunc($3, m.bucket_time) AS bucket, sum(m.push_message_count)::int8 AS messages
      FROM queen.queue_lag_metrics m JOIN queen.queues q ON q.id = m.queue_id
     WHERE m.bucket_time >= date_trunc($3, $1) AND m.bucket_time <= $2
       AND ($4::text IS NULL OR q.name = $4) AND ($5::text IS NULL OR q.namespace = $5)
       AND ($6::text IS NULL OR q.task = $6)
     GROUP BY 1
)
SELECT (extract(epoch FROM b.bucket) * 1000000)::int8 AS bucket_us, COALESCE(m.messages, 0)::int8 AS messages
  FROM b LEFT JOIN m ON m.bucket = b.bucket ORDER BY b.bucket
