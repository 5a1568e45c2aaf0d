-- The partitions a move locks before its dead-letter row, ascending by id:
-- the row's own ($1) and, when it exists already, the one it is pushed to
-- (queue $3, partition $4 of tenant $2).
SELECT p.id
  FROM queen.log_partitions p
 WHERE p.id = $1
    OR p.id = (SELECT t.id FROM queen.queues q JOIN queen.log_partitions t ON t.queue_id = q.id
                WHERE q.tenant_id = $2 AND q.name = $3 AND t.name = $4)
 ORDER BY p.id
   FOR UPDATE OF p
