SELECT e.i, e.queue, e.partition, c.committed
  FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(queue, partition, i)
  LEFT JOIN queen.queues q ON q.tenant_id = $4 AND q.name = e.queue
  LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = e.partition
  LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = $1
 ORDER BY e.i
