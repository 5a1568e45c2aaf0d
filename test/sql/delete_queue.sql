-- delete_queue: the queue, its partitions, messages, cursors, sidecar rows
-- and dead letters go in one call; a later push starts the queue anew.

SELECT count(*) AS pushed FROM json_array_elements(queen.push('[
  {"queue": "dq", "partition": "x", "payload": 1, "transactionId": "x1"},
  {"queue": "dq", "partition": "x", "payload": 2, "transactionId": "x2"},
  {"queue": "dq", "partition": "y", "payload": 3, "transactionId": "y1"}]'));
SELECT queen.pop('dq', 'x', 'g', 1) AS p \gset
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'dlq', 'g', 'no')));
SELECT queen.pop('dq', 'y', NULL, 1) AS p \gset
SELECT array_agg(p.id ORDER BY p.id) AS pids
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'dq' \gset
SELECT (SELECT count(*) FROM queen.log_segments WHERE partition_id = ANY(:'pids')) AS segments,
       (SELECT count(*) FROM queen.log_txns WHERE partition_id = ANY(:'pids')) AS txns,
       (SELECT count(*) FROM queen.log_consumers WHERE partition_id = ANY(:'pids')) AS cursors,
       (SELECT count(*) FROM queen.log_dlq WHERE partition_id = ANY(:'pids')) AS dead_letters;

SELECT queen.delete_queue('dq')::jsonb AS deleted;
SELECT (SELECT count(*) FROM queen.queues WHERE name = 'dq') AS queues,
       (SELECT count(*) FROM queen.log_partitions WHERE id = ANY(:'pids')) AS partitions,
       (SELECT count(*) FROM queen.log_segments WHERE partition_id = ANY(:'pids')) AS segments,
       (SELECT count(*) FROM queen.log_txns WHERE partition_id = ANY(:'pids')) AS txns,
       (SELECT count(*) FROM queen.log_consumers WHERE partition_id = ANY(:'pids')) AS cursors,
       (SELECT count(*) FROM queen.log_dlq WHERE partition_id = ANY(:'pids')) AS dead_letters;
SELECT regress.err($$SELECT queen.delete_queue('dq')$$) AS again;
SELECT regress.err($$SELECT queen.get_queue('dq')$$) AS get_queue;
SELECT regress.err($$SELECT queen.queue_counts('dq')$$) AS queue_counts;
SELECT queen.queue_version('dq') AS version;
-- The lease of the deleted queue is gone with it.
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed')));
SELECT r->'success' AS success,
    r->'renewed' AS renewed FROM queen.renew_lease(:'p'::json->>'leaseId') r;
-- A push makes the queue again, from offset 0, deduplicating nothing.
SELECT * FROM regress.pushed(queen.push('[{"queue": "dq", "partition": "x", "payload": 1,
    "transactionId": "x1"}]'));
