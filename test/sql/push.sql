-- push, push_text and push_binary: the answer per item, offsets dense per
-- partition, deduplication by transaction id, and what was stored.

-- Queue and partitions are created on first push; partition defaults to
-- 'Default'; a transaction id left out is the message id's text.
SELECT * FROM regress.pushed(queen.push('[
  {"queue": "p_orders", "partition": "customer-42", "payload": {"id": 1}, "transactionId": "o-1"},
  {"queue": "p_orders", "partition": "customer-42", "payload": {"id": 2}, "transactionId": "o-2"},
  {"queue": "p_orders", "payload": "plain text"},
  {"queue": "p_orders", "partition": "customer-7", "payload": [1, null, true]}
]'));
-- The items wrapped as {"items": [...]}; offsets run on without a gap.
SELECT * FROM regress.pushed(queen.push('{"items": [
  {"queue": "p_orders", "partition": "customer-42", "payload": {"id": 3}, "transactionId": "o-3"},
  {"queue": "p_orders", "partition": "customer-42"}
]}'));
-- A transaction id seen in the partition within the dedup window answers
-- duplicate with the original's offset; the same id twice in one push is
-- stored once; the same id in another partition is another message.
SELECT * FROM regress.pushed(queen.push('[
  {"queue": "p_orders", "partition": "customer-42", "payload": {"id": 1}, "transactionId": "o-1"},
  {"queue": "p_orders", "partition": "customer-42", "payload": {"id": 4}, "transactionId": "o-4"},
  {"queue": "p_orders", "partition": "customer-42", "payload": {"id": 4}, "transactionId": "o-4"},
  {"queue": "p_orders", "partition": "customer-7", "payload": {"id": 1}, "transactionId": "o-1"}
]'));
-- A duplicate answers the original's message id.
SELECT queen.push('[{"queue": "p_orders", "partition": "customer-42", "payload": 5,
                     "transactionId": "o-5"}]')->0->>'messageId' AS first_id \gset
SELECT r->>'status' AS status, r->>'offset' AS "offset",
    r->>'messageId' = :'first_id' AS same_message_id
  FROM json_array_elements(queen.push('[{"queue": "p_orders", "partition": "customer-42",
                                         "payload": 6, "transactionId": "o-5"}]')) r;
-- Items of one partition in one call are one segment.
SELECT p.name,
       COALESCE((SELECT ls.end_offset FROM queen.log_segments ls WHERE ls.partition_id = p.id
                  ORDER BY ls.base_offset DESC LIMIT 1), p.log_start - 1) AS last_offset,
       count(s.*) AS segments, sum(s.frame_count) AS frames
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
  LEFT JOIN queen.log_segments s ON s.partition_id = p.id
 WHERE q.name = 'p_orders' GROUP BY 1, 2 ORDER BY 1;

-- push_text: the same body as text, the same answer; payloads are kept as
-- the text they were sent as.
SELECT * FROM regress.pushed(queen.push_text('[
  {"queue": "p_text", "payload": {"b": 1,   "a": [1.50, 2]}, "transactionId": "t-1"},
  {"queue": "p_text", "payload": "x", "transactionId": "t-2"}
]'));
SELECT * FROM regress.pushed(queen.push_text('{"items": [{"queue": "p_text", "payload": 3,
    "transactionId": "t-1"}]}'));
SELECT queen.pop('p_text', NULL, NULL, 10,
    '{"autoAck": true}')->'messages'->0->'data' AS kept_as_sent;

-- The producer is stamped into every message.
SELECT * FROM regress.pushed(queen.push('[{"queue": "p_producer", "payload": 1}]', 'svc-a'));
SELECT m->>'producerSub' AS producer, m->>'traceId' AS trace
  FROM json_array_elements(queen.pop('p_producer', NULL, NULL, 1,
      '{"autoAck": true}')->'messages') m;
SELECT * FROM regress.pushed(queen.push('[{"queue": "p_producer", "payload": 2,
  "traceId": "0192d4c1-7a3b-7cde-8f01-23456789abcd"}]'));
SELECT m->>'producerSub' AS producer, m->>'traceId' AS trace
  FROM json_array_elements(queen.pop('p_producer', NULL, NULL, 1,
      '{"autoAck": true}')->'messages') m;

-- push_binary: QPB1, flags 4 (every item carries a transaction id), one
-- group: queue "p_bin", partition "b", two items.
SELECT * FROM regress.pushed(queen.push_binary(decode(
    '51504231' || '04'                       -- magic, flags
 || '01000000'                               -- one group
 || '0500' || encode('p_bin', 'hex')         -- queue
 || '0100' || encode('b', 'hex')             -- partition
 || '02000000'                               -- two items
 || '0300' || encode('b-1', 'hex') || '07000000' || encode('{"k":1}', 'hex')
 || '0300' || encode('b-2', 'hex') || '03000000' || encode('[2]', 'hex'),
 'hex')));
-- Flags 6: counts instead of one answer per item; b-1 is a duplicate now.
SELECT queen.push_binary(decode(
    '51504231' || '06' || '01000000'
 || '0500' || encode('p_bin', 'hex') || '0100' || encode('b', 'hex') || '02000000'
 || '0300' || encode('b-1', 'hex') || '07000000' || encode('{"k":1}', 'hex')
 || '0300' || encode('b-3', 'hex') || '03000000' || encode('[3]', 'hex'),
 'hex'))::jsonb AS counts;
SELECT queue, partition, "offset", txn, data
  FROM regress.msgs(queen.pop('p_bin', NULL, NULL, 10, '{"autoAck": true}'));

-- queue_version grows with every message pushed to the queue.
SELECT queen.queue_version('p_orders') AS orders, queen.queue_version('p_text') AS text,
       queen.queue_version('p_none') AS absent;
