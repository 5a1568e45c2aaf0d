-- Where a dead letter lives, read before anything is locked: a move takes
-- the partitions first (the lock order), then the row.
SELECT d.partition_id, q.name AS queue, p.name AS partition
  FROM queen.log_dlq d
  JOIN queen.log_partitions p ON p.id = d.partition_id
  JOIN queen.queues q ON q.id = d.queue_id
 WHERE d.id = $1
