-- transaction: pushes, acks, KV and timer riders, all or nothing; required
-- leases; refused acks and lost KV preconditions apply nothing.

SELECT count(*) AS pushed FROM json_array_elements(queen.push('[
  {"queue": "tx_in", "payload": {"order": 1}, "transactionId": "in-1"},
  {"queue": "tx_in", "payload": {"order": 2}, "transactionId": "in-2"}]'));
SELECT queen.pop('tx_in', NULL, NULL, 1) AS p \gset

-- An ack and a push together; results are one flat list in the order given.
SELECT queen.transaction(jsonb_build_object(
    'operations', jsonb_build_array(
        jsonb_build_object('type', 'ack', 'transactionId', 'in-1',
                           'partitionId', :'p'::json->>'partitionId', 'status', 'completed'),
        jsonb_build_object('type', 'push', 'items', jsonb_build_array(
            jsonb_build_object('queue', 'tx_out', 'payload', jsonb_build_object('invoice', 1),
                               'transactionId', 'out-1')))),
    'requiredLeases', jsonb_build_array(:'p'::json->>'leaseId'))) AS t \gset
SELECT (:'t'::jsonb) - 'results' AS head;
SELECT r->>'index' AS idx, r->>'type' AS type, r->>'transactionId' AS txn, r->>'status' AS status,
       r->>'success' AS success, r->>'offset' AS "offset"
  FROM json_array_elements((:'t'::json)->'results') r;
SELECT "offset", txn, data FROM regress.msgs(queen.pop('tx_out', NULL, NULL, 10,
    '{"autoAck": true}'));
SELECT "offset", txn FROM regress.msgs(queen.pop('tx_in', NULL, NULL, 10, '{"autoAck": true}'));

-- A required lease that is not held: an error, and nothing is applied.
SELECT regress.err($$SELECT queen.transaction('{"operations": [
    {"type": "push", "items": [{"queue": "tx_out", "payload": 2, "transactionId": "out-2"}]}],
  "requiredLeases": ["00000000-0000-4000-8000-000000000000"]}')$$) AS error;
-- A refused ack: an error, and nothing is applied.
SELECT regress.no_ids(regress.err(format($$SELECT queen.transaction('{"operations": [
    {"type": "push", "items": [{"queue": "tx_out", "payload": 3, "transactionId": "out-3"}]},
    {"type": "ack", "transactionId": "never", "partitionId": "%s"}]}')$$,
    :'p'::json->>'partitionId'))) AS error;
SELECT queen.queue_version('tx_out') AS out_version;

-- KV and timer riders run first; their results follow the pushes and acks.
SELECT queen.transaction('{"operations": [
    {"type": "push", "items": [{"queue": "tx_out", "payload": 4, "transactionId": "out-4"}]}],
  "kv": [{"op": "put", "ns": "tx", "key": "k1", "value": {"v": 1}, "ttlSeconds": 3600},
         {"op": "get", "ns": "tx", "key": "k1"}],
  "timers": [{"op": "schedule", "queue": "tx_out", "timerKey": "tm-1", "delayMs": 3600000,
              "txn": "tm-txn-1", "payload": "eyJ0IjoxfQ=="}]}') AS t \gset
SELECT r->>'index' AS idx, r->>'transactionId' AS txn, r->>'status' AS status,
       r->>'applied' AS applied, r->'value' AS value
  FROM json_array_elements((:'t'::json)->'results') r;
SELECT queen.kv_get('tx', 'k1') AS kv;
SELECT queue, timer_key FROM queen.log_timers WHERE queue = 'tx_out';
-- A required KV precondition that is lost: nothing of the call is written.
SELECT (t::jsonb) - 'results' - 'version' AS verdict
  FROM queen.transaction('{"operations": [
    {"type": "push", "items": [{"queue": "tx_out", "payload": 5, "transactionId": "out-5"}]}],
  "kv": [{"op": "put", "ns": "tx", "key": "k2", "value": 2, "ttlSeconds": 60},
         {"op": "put", "ns": "tx", "key": "k1", "value": 3, "ttlSeconds": 60, "expect": 0,
          "required": true}]}') t;
SELECT queen.kv_get('tx', 'k1') AS k1, queen.kv_get('tx', 'k2') AS k2,
       queen.queue_version('tx_out') AS out_version;
