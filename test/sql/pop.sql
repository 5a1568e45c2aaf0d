-- pop in queue mode and for consumer groups: batches, the lease that keeps
-- a partition to one consumer, several partitions under one lease, one
-- partition by name, subscriptions, delays, namespace/task pops and the
-- framed answer.

SELECT count(*) AS pushed FROM json_array_elements(queen.push(
  (SELECT jsonb_agg(jsonb_build_object('queue', 'po_q', 'payload', jsonb_build_object('n', i),
                                       'transactionId', 'q-' || i))
     FROM generate_series(0, 4) i)));

-- Queue mode (no group): a batch of 2 from the head, leased.
SELECT queen.pop('po_q', NULL, NULL, 2) AS p \gset
SELECT regress.popped(:'p');
SELECT * FROM regress.msgs(:'p');
-- The only partition is leased: the next pop of queue mode finds nothing.
SELECT regress.popped(queen.pop('po_q', NULL, NULL, 2));
-- Acking both moves the cursor; the next pop starts after them; batch
-- defaults to 1.
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed')));
SELECT queen.pop('po_q') AS p \gset
SELECT "offset", txn, data, attempt FROM regress.msgs(:'p');
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed')));
-- autoAck: delivered and done at once, no lease.
SELECT queen.pop('po_q', NULL, NULL, 10, '{"autoAck": true}') AS p \gset
SELECT regress.popped(:'p');
SELECT "offset", txn, data, leased FROM regress.msgs(:'p');
SELECT regress.popped(queen.pop('po_q', NULL, NULL, 10));

-- A consumer group reads every message again, with its own cursor; a
-- second group has a cursor of its own.
SELECT queen.pop('po_q', NULL, 'billing', 3) AS p \gset
SELECT regress.popped(:'p');
SELECT "offset", txn, grp, leased FROM regress.msgs(:'p');
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed', 'billing')));
SELECT "offset", txn, grp FROM regress.msgs(queen.pop('po_q', NULL, 'audit', 10,
    '{"autoAck": true}'));
SELECT "offset", txn, grp FROM regress.msgs(queen.pop('po_q', NULL, 'billing', 10,
    '{"autoAck": true}'));
-- The group body form of ack: {"acknowledgments": [...], "consumerGroup": ...}.
SELECT * FROM regress.pushed(queen.push('[{"queue": "po_q", "payload": {"n": 5},
    "transactionId": "q-5"}]'));
SELECT queen.pop('po_q', NULL, 'billing', 10) AS p \gset
SELECT "offset", txn, grp FROM regress.msgs(:'p');
SELECT * FROM regress.acked(queen.ack(jsonb_build_object(
    'acknowledgments', regress.acks(:'p', 'completed'), 'consumerGroup', 'billing')));

-- A group subscribing with "new" skips what was pushed before its first pop.
SELECT regress.popped(queen.pop('po_q', NULL, 'latecomer', 10, '{"subscriptionMode": "new"}'));
SELECT * FROM regress.pushed(queen.push('[{"queue": "po_q", "payload": {"n": 6},
    "transactionId": "q-6"}]'));
SELECT "offset", txn, grp FROM regress.msgs(queen.pop('po_q', NULL, 'latecomer', 10,
    '{"autoAck": true}'));

-- Several partitions: one pop claims at most options.partitions of them
-- under one lease; batch caps the messages over all of them.
SELECT count(*) AS pushed FROM json_array_elements(queen.push(
  (SELECT jsonb_agg(jsonb_build_object('queue', 'po_multi', 'partition', p,
                                       'payload', p || i, 'transactionId', p || i))
     FROM unnest(ARRAY['a', 'b', 'c']) p, generate_series(1, 3) i)));
SELECT queen.pop('po_multi', NULL, 'g', 10, '{"partitions": 2}') AS p \gset
SELECT (regress.popped(:'p'))->'partitionsClaimed' AS claimed,
    (regress.popped(:'p'))->'messages' AS messages;
SELECT count(DISTINCT m->>'leaseId') AS leases, count(DISTINCT m->>'partition') AS partitions
  FROM json_array_elements((:'p'::json)->'messages') m;
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed', 'g')));
-- The batch caps the total: 2 messages from up to 3 partitions.
SELECT queen.pop('po_multi', NULL, 'g2', 2, '{"partitions": 3}') AS p \gset
SELECT (regress.popped(:'p'))->'messages' AS messages;
-- One partition by name.
SELECT partition, "offset", txn FROM regress.msgs(queen.pop('po_multi', 'c', 'g3', 10,
    '{"autoAck": true}'));
SELECT regress.popped(queen.pop('po_multi', 'c', 'g3', 10));
SELECT regress.popped(queen.pop('po_multi', 'nope', 'g3', 10));

-- delayedProcessing hides what is younger than the delay; windowBuffer
-- skips a partition written to within the window.
SELECT queen.configure('po_delayed', '{"delayedProcessing": 3600}')->>'success' AS configured;
SELECT * FROM regress.pushed(queen.push('[{"queue": "po_delayed", "payload": 1,
    "transactionId": "d-1"}]'));
SELECT regress.popped(queen.pop('po_delayed', NULL, NULL, 10));
SELECT queen.configure('po_window', '{"windowBuffer": 3600}')->>'success' AS configured;
SELECT * FROM regress.pushed(queen.push('[{"queue": "po_window", "payload": 1,
    "transactionId": "w-1"}]'));
SELECT regress.popped(queen.pop('po_window', NULL, NULL, 10));

-- Queue NULL: any queue with the namespace, or the task.
SELECT queen.configure('po_ns_low',
    '{"namespace": "po_ns", "task": "low", "priority": 1}')->>'success' AS low,
       queen.configure('po_ns_high',
           '{"namespace": "po_ns", "task": "high", "priority": 9}')->>'success' AS high;
SELECT count(*) AS pushed FROM json_array_elements(queen.push('[
  {"queue": "po_ns_low", "payload": "low", "transactionId": "l-1"},
  {"queue": "po_ns_high", "payload": "high", "transactionId": "h-1"}]'));
SELECT queue, txn, data
  FROM regress.msgs(queen.pop(NULL, NULL, NULL, 10,
      '{"namespace": "po_ns", "partitions": 2, "autoAck": true}'))
 ORDER BY queue;
SELECT regress.popped(queen.pop(NULL, NULL, NULL, 10, '{"namespace": "po_ns"}'));
SELECT count(*) AS pushed FROM json_array_elements(queen.push('[
  {"queue": "po_ns_low", "payload": "low", "transactionId": "l-2"},
  {"queue": "po_ns_high", "payload": "high", "transactionId": "h-2"}]'));
SELECT queue, txn, data
  FROM regress.msgs(queen.pop(NULL, NULL, NULL, 10,
      '{"task": "high", "partitions": 2, "autoAck": true}'));
SELECT queen.queue_version(NULL, 'po_ns') AS by_namespace,
       queen.queue_version(NULL, NULL, 'low') AS by_task;

-- pop_frames: the same pop answered as a framed body (QPF1).
SELECT * FROM regress.pushed(queen.push('[{"queue": "po_frames", "payload": {"f": 1},
    "transactionId": "f-1"}]'));
SELECT convert_from(substr(
           queen.pop_frames('po_frames', NULL, NULL, 1, '{"autoAck": true}'), 1, 4), 'UTF8')
       AS magic;
SELECT regress.popped(queen.pop('po_frames', NULL, NULL, 1));
