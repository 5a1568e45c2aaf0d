-- A cycle's query $1 and source partition $2: whether the query exists, and
-- the partition's queue (no row when the partition does not exist).
SELECT EXISTS (SELECT 1 FROM queen.stream_queries WHERE id = $1) AS query_known,
       q.name AS queue_name
  FROM queen.log_partitions p
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE p.id = $2
