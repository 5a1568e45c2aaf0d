SELECT q.name AS queue, p.name AS partition, p.id AS partition_id, c.committed, p.last_offset,
       c.lease_id IS NOT NULL AND c.lease_expires_at > now() AS leased
 FROM queen.log_consumers c
 JOIN queen.log_partitions p ON p.id = c.partition_id
 JOIN queen.queues q ON q.id = p.queue_id
WHERE c.consumer_group = $1 ORDER BY q.name, p.name
