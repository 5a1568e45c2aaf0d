-- The partitions $1 (ids, ascending, each once) locked ascending by id, with
-- the names they answer to now: a push that remembered these ids for its
-- (queue, partition) names takes only the rows whose names still match.
SELECT p.id, p.name, q.name AS queue, q.tenant_id, q.dedup_window_seconds, p.txns_start
  FROM queen.log_partitions p
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE p.id = ANY($1)
 ORDER BY p.id
   FOR NO KEY UPDATE OF p
