-- A partition and its queue, as the message readers name them.
SELECT p.id, p.name AS partition, p.log_start, p.last_offset, q.id AS queue_id, q.name AS queue,
       q.namespace, q.task, q.priority
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE p.id = $1
