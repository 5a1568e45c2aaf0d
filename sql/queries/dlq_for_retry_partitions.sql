-- The partitions of the dead letters a retry of a queue would take (one
-- group, or all; oldest failure first, at most $3), read before anything is
-- locked: the retry locks them first (the lock order), then the rows.
SELECT DISTINCT c.partition_id
  FROM (SELECT d.partition_id FROM queen.log_dlq d
         WHERE d.queue_id = $1 AND ($2::text IS NULL OR d.consumer_group = $2)
         ORDER BY d.failed_at, d.id LIMIT $3) c
