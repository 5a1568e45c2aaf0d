-- ack: completed, failed (redelivered after retryDelay, dead-lettered when
-- the retries run out), retry, dlq; refused acks; ack_text; renew_lease.

SELECT queen.configure('ak',
    '{"retryLimit": 1, "retryDelay": 0}')->'options'->>'retryLimit' AS retry_limit;
SELECT count(*) AS pushed FROM json_array_elements(queen.push(
  (SELECT jsonb_agg(jsonb_build_object('queue', 'ak', 'payload', i, 'transactionId', 'a' || i))
     FROM generate_series(1, 4) i)));

-- The first delivery: a1 done, a2 failed, a3 done, a4 left unanswered.
SELECT queen.pop('ak', NULL, NULL, 3) AS p \gset
SELECT "offset", txn, attempt, retries FROM regress.msgs(:'p');
SELECT * FROM regress.acked(queen.ack(jsonb_build_array(
    jsonb_build_object('transactionId', 'a1', 'partitionId', :'p'::json->>'partitionId',
                       'leaseId', :'p'::json->>'leaseId', 'status', 'completed'),
    jsonb_build_object('transactionId', 'a2', 'partitionId', :'p'::json->>'partitionId',
                       'leaseId', :'p'::json->>'leaseId', 'status', 'failed', 'error', 'boom'),
    jsonb_build_object('transactionId', 'a3', 'partitionId', :'p'::json->>'partitionId',
                       'leaseId', :'p'::json->>'leaseId'))));
-- The lease ends at the first failure: a2 and what follows it come again
-- (deliveryAttempt counts the deliveries of the batch's head).
SELECT queen.pop('ak', NULL, NULL, 10) AS p \gset
SELECT "offset", txn, attempt, retries FROM regress.msgs(:'p');
-- A second failure of a2 uses up its retry: once the rest of the lease is
-- answered, a2 is dead-lettered and the cursor moves past all three.
SELECT * FROM regress.acked(queen.ack(jsonb_build_array(
    jsonb_build_object('transactionId', 'a2', 'partitionId', :'p'::json->>'partitionId',
                       'leaseId', :'p'::json->>'leaseId', 'status', 'failed', 'error',
                           'boom again'))));
SELECT * FROM regress.acked(queen.ack(jsonb_build_array(
    jsonb_build_object('transactionId', 'a3', 'partitionId', :'p'::json->>'partitionId',
                       'leaseId', :'p'::json->>'leaseId', 'status', 'completed'),
    jsonb_build_object('transactionId', 'a4', 'partitionId', :'p'::json->>'partitionId',
                       'leaseId', :'p'::json->>'leaseId', 'status', 'completed'))));
SELECT regress.popped(queen.pop('ak', NULL, NULL, 10));
SELECT d->>'transactionId' AS txn, d->>'consumerGroup' AS grp, d->>'errorMessage' AS error,
       d->'data' AS data
  FROM json_array_elements(queen.dlq_messages('{"queue": "ak"}')->'messages') d;

-- retry: delivered again at once, counted like a failure.
SELECT * FROM regress.pushed(queen.push('[{"queue": "ak", "payload": 5, "transactionId": "a5"}]'));
SELECT queen.pop('ak', NULL, NULL, 10) AS p \gset
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'retry')));
SELECT queen.pop('ak', NULL, NULL, 10) AS p \gset
SELECT "offset", txn, attempt, retries FROM regress.msgs(:'p');
-- dlq: dead-lettered now, whatever the retries left.
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'dlq', NULL, 'poison')));
SELECT regress.popped(queen.pop('ak', NULL, NULL, 10));
SELECT d->>'transactionId' AS txn, d->>'errorMessage' AS error
  FROM json_array_elements(queen.dlq_messages('{"queue": "ak"}')->'messages') d ORDER BY 1;

-- A consumer group fails on its own: queue mode's dead letters are not its.
SELECT queen.pop('ak', NULL, 'grp', 1) AS p \gset
SELECT "offset", txn, grp FROM regress.msgs(:'p');
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'dlq', 'grp', 'group says no')));
SELECT d->>'transactionId' AS txn, d->>'consumerGroup' AS grp, d->>'errorMessage' AS error
  FROM json_array_elements(queen.dlq_messages('{"queue": "ak",
      "consumerGroup": "grp"}')->'messages') d;

-- Refused acks change nothing: an unknown transaction id, a lease that is
-- not the one holding the message. Acking what is done already succeeds.
SELECT * FROM regress.pushed(queen.push('[{"queue": "ak", "payload": 6, "transactionId": "a6"}]'));
SELECT queen.pop('ak', NULL, NULL, 10) AS p \gset
SELECT * FROM regress.acked(queen.ack(jsonb_build_object(
    'transactionId', 'nope', 'partitionId', :'p'::json->>'partitionId',
    'leaseId', :'p'::json->>'leaseId')));
SELECT * FROM regress.acked(queen.ack(jsonb_build_object(
    'transactionId', 'a6', 'partitionId', :'p'::json->>'partitionId',
    'leaseId', '00000000-0000-4000-8000-000000000000')));
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed')));
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed')));
SELECT * FROM regress.acked(queen.ack(jsonb_build_object(
    'transactionId', 'a1', 'partitionId', :'p'::json->>'partitionId')));

-- ack_text: the same body as text, the same answer.
SELECT * FROM regress.pushed(queen.push('[{"queue": "ak", "payload": 7, "transactionId": "a7"}]'));
SELECT queen.pop('ak', NULL, NULL, 10) AS p \gset
SELECT * FROM regress.acked(queen.ack_text(regress.acks(:'p', 'success')::text));

-- renew_lease: every partition lease held under the id, by the given
-- seconds or the queue's leaseTime; a lease that is gone answers false.
SELECT count(*) AS pushed FROM json_array_elements(queen.push('[
  {"queue": "ak_renew", "partition": "x", "payload": 1, "transactionId": "r1"},
  {"queue": "ak_renew", "partition": "y", "payload": 2, "transactionId": "r2"}]'));
SELECT queen.pop('ak_renew', NULL, NULL, 10, '{"partitions": 2}') AS p \gset
SELECT r->'success' AS success, r->'renewed' AS renewed,
    r->>'leaseId' = :'p'::json->>'leaseId' AS same_lease
  FROM queen.renew_lease(:'p'::json->>'leaseId', 120) r;
SELECT bool_and(lease_expires_at - now() BETWEEN interval '100 s' AND interval '120 s') AS for_120_s
  FROM queen.log_consumers WHERE lease_id = (:'p'::json->>'leaseId')::uuid;
SELECT r->'success' AS success, r->'renewed' AS renewed
  FROM queen.renew_lease(:'p'::json->>'leaseId') r;
SELECT bool_and(lease_expires_at - now() BETWEEN interval '40 s' AND interval '60 s')
    AS for_lease_time
  FROM queen.log_consumers WHERE lease_id = (:'p'::json->>'leaseId')::uuid;
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed')));
SELECT r->'success' AS success, r->'renewed' AS renewed, regress.no_ids(r->>'error') AS error
  FROM queen.renew_lease(:'p'::json->>'leaseId', 120) r;
SELECT r->'success' AS success, r->'renewed' AS renewed, r->>'error' AS error
  FROM queen.renew_lease('00000000-0000-4000-8000-000000000000') r;
