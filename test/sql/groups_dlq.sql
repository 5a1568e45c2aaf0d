-- The consumer-group readers and admin (list, get, seek, subscription,
-- delete) and the dead-letter readers and admin (dlq_messages,
-- get_dlq_message, retry, delete, queue_counts).

SELECT count(*) AS pushed FROM json_array_elements(queen.push(
  (SELECT jsonb_agg(jsonb_build_object('queue', 'cg', 'partition', p, 'payload', p || i,
                                       'transactionId', p || i))
     FROM unnest(ARRAY['a', 'b']) p, generate_series(0, 4) i)));
-- Group "reader" done with a0..a2 and b0, a lease open on b1.
SELECT count(*) AS popped FROM regress.msgs(queen.pop('cg', 'a', 'reader', 3, '{"autoAck": true}'));
SELECT count(*) AS popped FROM regress.msgs(queen.pop('cg', 'b', 'reader', 1, '{"autoAck": true}'));
SELECT queen.pop('cg', 'b', 'reader', 1) AS p \gset
SELECT partition, txn FROM regress.msgs(:'p');
SELECT count(*) AS popped FROM regress.msgs(queen.pop('cg', 'a', 'other', 5, '{"autoAck": true}'));

-- The list: per group and queue, the partitions read and the lag.
SELECT g->>'consumerGroup' AS grp, q->>'queue' AS queue, q->'partitions' AS partitions,
    q->'lag' AS lag
  FROM json_array_elements(queen.consumer_groups_list()->'consumerGroups') g,
       json_array_elements(g->'queues') q
 WHERE q->>'queue' = 'cg' ORDER BY 1;
-- One group: its cursor and lease on every partition.
SELECT p->>'queue' AS queue, p->>'partition' AS partition, p->'committedOffset' AS committed,
       p->'lastOffset' AS last_offset, p->'lag' AS lag, p->'leased' AS leased
  FROM json_array_elements(queen.consumer_group_get('reader')->'partitions') p;

-- seek to the end: the cursors move past everything, the lease is dropped.
SELECT (s::jsonb) - 'queue' AS seek FROM queen.consumer_group_seek('reader', 'cg',
    '{"position": "end"}') s;
SELECT p->>'partition' AS partition, p->'committedOffset' AS committed, p->'lag' AS lag,
    p->'leased' AS leased
  FROM json_array_elements(queen.consumer_group_get('reader')->'partitions') p;
SELECT regress.popped(queen.pop('cg', NULL, 'reader', 10));
-- An ack under the lease seek dropped: its message is behind the cursor
-- now, so done already, and the ack changes nothing.
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'completed', 'reader')));
-- seek to the beginning: everything is read again.
SELECT (s::jsonb) - 'queue' AS seek FROM queen.consumer_group_seek('reader', 'cg',
    '{"position": "beginning"}') s;
SELECT partition, txn FROM regress.msgs(queen.pop('cg', NULL, 'reader', 10,
    '{"partitions": 2, "autoAck": true}'));
-- seek to a timestamp later than every message: as the end.
SELECT (now() + interval '1 day')::text AS ts \gset
SELECT (s::jsonb) - 'queue' - 'targetTimestamp' AS seek,
       (s->>'targetTimestamp')::timestamptz = :'ts'::timestamptz AS target
  FROM queen.consumer_group_seek('reader', 'cg', jsonb_build_object('timestamp', :'ts')) s;
SELECT p->>'partition' AS partition, p->'committedOffset' AS committed
  FROM json_array_elements(queen.consumer_group_get('reader')->'partitions') p;
-- A seek may make a group for a queue it has not read.
SELECT (s::jsonb) - 'queue' AS seek FROM queen.consumer_group_seek('fresh', 'cg',
    '{"toEnd": true}') s;

-- The subscription of a group that subscribed (by its first pop).
SELECT (s::jsonb) AS subscription FROM queen.consumer_group_subscription('other',
    '2020-01-01T00:00:00Z') s;
SELECT consumer_group, subscription_mode, subscription_from = '2020-01-01T00:00:00Z' AS from_then
  FROM queen.consumer_groups WHERE consumer_group = 'other';

-- delete: the cursors of one queue (or all), with or without the subscription.
SELECT (d::jsonb) AS deleted FROM queen.consumer_group_delete('other', 'cg', false) d;
SELECT count(*) AS subscriptions FROM queen.consumer_groups WHERE consumer_group = 'other';
SELECT (d::jsonb) AS deleted FROM queen.consumer_group_delete('other') d;
SELECT regress.err($$SELECT queen.consumer_group_get('other')$$) AS gone;
SELECT g->>'consumerGroup' AS grp
  FROM json_array_elements(queen.consumer_groups_list()->'consumerGroups') g,
       json_array_elements(g->'queues') q
 WHERE q->>'queue' = 'cg' ORDER BY 1;

-- Dead letters: three messages of partition a dead-lettered by group "dl".
SELECT queen.configure('cg', '{"retryLimit": 0, "retryDelay": 0}')->>'success' AS configured;
SELECT queen.pop('cg', 'a', 'dl', 3) AS p \gset
SELECT :'p'::json->>'partitionId' AS pid_a \gset
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'failed', 'dl', 'bad input')));
SELECT d->>'transactionId' AS txn, d->>'queue' AS queue, d->>'partition' AS partition,
       d->>'consumerGroup' AS grp, d->>'errorMessage' AS error, d->'data' AS data,
       d->'retryCount' AS retries
  FROM json_array_elements(queen.dlq_messages('{"queue": "cg"}')->'messages') d ORDER BY 1;
-- Paging: newest first, limit and offset; total counts every match.
SELECT r->'total' AS total, r->'limit' AS "limit", r->'offset' AS "offset",
       json_array_length(r->'messages') AS page
  FROM queen.dlq_messages('{"queue": "cg", "limit": 2, "offset": 2}') r;
SELECT r->'total' AS total FROM queen.dlq_messages('{"queue": "cg", "consumerGroup": "nobody"}') r;
SELECT r->'total' AS total
    FROM queen.dlq_messages('{"queue": "cg", "from": "2999-01-01T00:00:00Z"}') r;
-- One dead letter by partition and transaction id.
SELECT d->>'transactionId' AS txn, d->>'consumerGroup' AS grp, d->>'errorMessage' AS error,
       d->'data' AS data
  FROM json_array_elements(queen.get_dlq_message(:'pid_a', 'a1')->'messages') d;
SELECT regress.no_ids(regress.err(format('SELECT queen.get_dlq_message(%s, %L)', :'pid_a',
    'zz'))) AS absent;
SELECT queen.queue_counts('cg')::jsonb AS counts;
-- retry one: pushed again into its partition under its transaction id.
SELECT r->'matched' AS matched, json_array_length(r->'retried') AS retried,
       r->'retried'->0->>'transactionId' AS txn, r->'retried'->0->'offset' AS "offset"
  FROM queen.retry_dlq_message(:'pid_a', 'a0') r;
-- delete one.
SELECT (d::jsonb) - 'partitionId' AS deleted FROM queen.delete_dlq_message(:'pid_a', 'a1') d;
SELECT regress.no_ids(regress.err(format('SELECT queen.delete_dlq_message(%s, %L)', :'pid_a',
    'a1'))) AS again;
SELECT regress.no_ids(regress.err(format('SELECT queen.retry_dlq_message(%s, %L)', :'pid_a',
    'a1'))) AS retry_gone;
-- retry by queue: what is left.
SELECT r->'matched' AS matched, r->'pruned_failed_count' AS pruned,
       (SELECT json_agg(x->>'transactionId') FROM json_array_elements(r->'retried') x) AS retried
  FROM queen.retry_failed_by_queue('cg', 'dl', 100) r;
SELECT queen.queue_counts('cg')::jsonb AS counts;
-- The retried messages are in the log again, after what was there.
SELECT partition, "offset", txn, data
  FROM regress.msgs(queen.pop('cg', 'a', 'late', 100, '{"autoAck": true}')) WHERE "offset" > 4;
