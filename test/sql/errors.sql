-- Bad input: an ERROR whose SQLSTATE says what kind of problem it is and
-- whose message names the field. 22023 missing or invalid value, 42804
-- wrong JSON type, 22001 name over 1024 bytes, 22P02 not a UUID, 22P03
-- malformed binary body, 42704 unknown object, 55000 required lease not
-- held, 53400 KV quota, 54000 over a configured bound, 25000 wrong
-- isolation level. Nothing of a refused call is written.

-- push
SELECT regress.err($$SELECT queen.push(NULL)$$) AS no_items;
SELECT regress.err($$SELECT queen.push('[]')$$) AS empty;
SELECT regress.err($$SELECT queen.push('[{"payload": 1}]')$$) AS no_queue;
SELECT regress.err($$SELECT queen.push('[{"queue": ""}]')$$) AS empty_queue;
SELECT regress.err($$SELECT queen.push('[{"queue": 5}]')$$) AS queue_not_text;
SELECT regress.err($$SELECT queen.push('[{"queue": "e", "partition": 1}]')$$) AS partition_not_text;
SELECT regress.err($$SELECT queen.push('[{"queue": "e", "transactionId": 7}]')$$) AS txn_not_text;
SELECT regress.err($$SELECT queen.push('"items"')$$) AS not_a_list;
SELECT regress.err($$SELECT queen.push('[1]')$$) AS item_not_an_object;
SELECT regress.err($$SELECT queen.push('[{"queue": "e", "traceId": "not-a-uuid"}]')$$) AS bad_trace;
SELECT regress.err(format('SELECT queen.push(%L)',
    jsonb_build_array(jsonb_build_object('queue', repeat('q', 1025))))) AS long_queue;
SELECT regress.err(format('SELECT queen.push(%L)',
    jsonb_build_array(jsonb_build_object('queue', 'e', 'transactionId', repeat('t',
        1025))))) AS long_txn;
SELECT regress.err($$SELECT queen.push_text(NULL)$$) AS text_no_items;
SELECT regress.err($$SELECT queen.push_text('[{"queue": "e"')$$) AS text_malformed;
SELECT regress.err($$SELECT queen.push_text('[{"queue": "e", "payload": 1, "payload": 2}]')$$)
    AS text_repeated_key;
SET queen.push_max_items = 1;
SELECT regress.err($$SELECT queen.push('[{"queue": "e"}, {"queue": "e"}]')$$) AS over_max_items;
RESET queen.push_max_items;
-- push_binary
SELECT regress.err($$SELECT queen.push_binary(NULL)$$) AS binary_no_body;
SELECT regress.err($$SELECT queen.push_binary('\x00')$$) AS binary_short;
SELECT regress.err($$SELECT queen.push_binary(convert_to('QPB2', 'UTF8') || '\x00'::bytea)$$)
    AS binary_magic;
SELECT regress.err($$SELECT queen.push_binary(decode('5150423100' || '01000000' || '0100' || '65'
    || '0100' || '70' || '01000000' || '03000000' || encode('{x}', 'hex'),
        'hex'))$$) AS binary_not_json;
SELECT regress.err($$SELECT queen.push_binary(decode('5150423100' || '01000000' || '0100' || '65'
    || '0100' || '70' || '01000000' || '09000000' || encode('{}', 'hex'),
        'hex'))$$) AS binary_truncated;
SELECT regress.err($$SELECT queen.push_binary(decode('5150423100' || '00000000',
    'hex'))$$) AS binary_empty;
SELECT regress.err($$SELECT queen.transaction_binary(convert_to('QTB9', 'UTF8'))$$)
    AS txn_binary_magic;
SELECT count(*) AS queues_made FROM queen.queues WHERE name IN ('e', 'p');

-- pop
SELECT regress.err($$SELECT queen.pop(NULL)$$) AS no_queue;
SELECT regress.err($$SELECT queen.pop('e', NULL, NULL, 0)$$) AS batch_zero;
SELECT regress.err($$SELECT queen.pop('e', NULL, NULL, 10001)$$) AS batch_over_max;
SELECT regress.err($$SELECT queen.pop('e', NULL, NULL, 1,
    '{"partitions": 0}')$$) AS partitions_zero;
SELECT regress.err($$SELECT queen.pop('e', NULL, NULL, 1,
    '{"partitions": true}')$$) AS partitions_not_int;
-- Numbers may travel as strings of digits.
SELECT regress.err($$SELECT queen.pop('e', NULL, NULL, 1,
    '{"partitions": "2"}')$$) AS partitions_as_digits;
SELECT regress.err($$SELECT queen.pop('e', NULL, NULL, 1,
    '{"partitions": "two"}')$$) AS partitions_not_digits;
SELECT regress.err($$SELECT queen.pop('e', NULL, 'g', 1,
    '{"subscriptionMode": "sometimes"}')$$) AS bad_mode;
SELECT regress.err($$SELECT queen.pop('e', NULL, 'g', 1,
    '{"subscriptionFrom": "yesterday"}')$$) AS bad_from;
SELECT regress.err($$SELECT queen.pop(NULL, 'p', NULL, 1,
    '{"namespace": "n"}')$$) AS partition_without_queue;
SELECT regress.err($$SELECT queen.pop('e', NULL, '')$$) AS empty_group;
SELECT regress.err($$SELECT queen.pop('e', NULL, NULL, 1, '[]')$$) AS options_not_an_object;
SELECT regress.err($$SELECT queen.queue_version(NULL)$$) AS version_of_nothing;

-- ack and renew_lease
SELECT regress.err($$SELECT queen.ack(NULL)$$) AS no_acks;
SELECT regress.err($$SELECT queen.ack('[]')$$) AS empty;
SELECT regress.err($$SELECT queen.ack('[{"partitionId": 1}]')$$) AS no_txn;
SELECT regress.err($$SELECT queen.ack('[{"transactionId": "t"}]')$$) AS no_partition;
SELECT regress.err($$SELECT queen.ack('[{"transactionId": "t", "partitionId": "x1"}]')$$)
    AS partition_not_a_number;
SELECT regress.err($$SELECT queen.ack('[{"transactionId": "t", "partitionId": 1,
    "status": "nah"}]')$$) AS bad_status;
SELECT regress.err($$SELECT queen.ack('[{"transactionId": "t", "partitionId": 1, "status": 3}]')$$)
    AS status_not_text;
SELECT regress.err($$SELECT queen.ack('[{"transactionId": "t", "partitionId": 1,
    "leaseId": "zzz"}]')$$) AS bad_lease;
SELECT regress.err($$SELECT queen.ack_text('[')$$) AS text_malformed;
SELECT regress.err($$SELECT queen.renew_lease(NULL)$$) AS renew_no_lease;
SELECT regress.err($$SELECT queen.renew_lease('zzz')$$) AS renew_bad_lease;
SELECT regress.err($$SELECT queen.renew_lease('00000000-0000-4000-8000-000000000000',
    0)$$) AS renew_zero;

-- transaction
SELECT regress.err($$SELECT queen.transaction(NULL)$$) AS no_ops;
SELECT regress.err($$SELECT queen.transaction('{"operations": [{"type": "pop"}]}')$$) AS bad_type;
SELECT regress.err($$SELECT queen.transaction('{"operations": []}')$$) AS empty;
SELECT regress.err($$SELECT queen.transaction('{"operations": [{"type": "push",
    "items": [{"queue": "e"}]}],
    "requiredLeases": ["x"]}')$$) AS bad_required_lease;
SELECT regress.err($$SELECT queen.transaction('{"operations": [{"type": "push", "items": []}],
    "requiredLeases": ["00000000-0000-4000-8000-000000000000"]}')$$) AS lease_not_held;

-- unknown objects
SELECT regress.err($$SELECT queen.delete_queue('e_none')$$) AS delete_unknown;
SELECT regress.err($$SELECT queen.delete_queue(NULL)$$) AS delete_no_queue;
SELECT regress.err($$SELECT queen.queue_counts('e_none')$$) AS counts_unknown;
SELECT regress.err($$SELECT queen.retention_explain('e_none')$$) AS explain_unknown;
SELECT regress.err($$SELECT queen.consumer_group_seek('g', 'e_none',
    '{"position": "end"}')$$) AS seek_unknown_queue;
SELECT regress.err($$SELECT queen.consumer_group_seek('g', 'e_none',
    '{"position": "middle"}')$$) AS seek_bad_position;
SELECT regress.err($$SELECT queen.consumer_group_get('g_none')$$) AS group_unknown;
SELECT regress.err($$SELECT queen.consumer_group_subscription('g_none',
    '2020-01-01T00:00:00Z')$$) AS subscription_unknown;
SELECT regress.err($$SELECT queen.consumer_group_delete('g',
    'e_none')$$) AS group_delete_unknown_queue;
SELECT regress.err($$SELECT queen.retry_failed_by_queue('e_none')$$) AS retry_unknown_queue;
SELECT regress.err($$SELECT queen.dlq_messages('{"limit": "ten"}')$$) AS dlq_bad_limit;

-- KV, locks and timers
SELECT regress.err($$SELECT queen.kv(NULL)$$) AS kv_no_body;
SELECT regress.err($$SELECT queen.kv('{"operations": [{"op": "put", "ns": "e", "key": "k",
    "value": 1}]}')$$) AS kv_no_expiry;
SELECT regress.err($$SELECT queen.kv('{"operations": [{"op": "put", "ns": "e", "key": "k",
    "value": 1,
    "ttlSeconds": 5, "forever": true}]}')$$) AS kv_both_expiries;
SELECT regress.err($$SELECT queen.kv('{"operations": [{"op": "fly", "ns": "e", "key": "k"}]}')$$)
    AS kv_bad_op;
SELECT regress.err($$SELECT queen.kv('{"operations": [{"op": "get", "ns": "bad ns",
    "key": "k"}]}')$$) AS kv_bad_ns;
SELECT regress.err(format('SELECT queen.kv_get(%L, %L)', 'e', repeat('k', 1025))) AS kv_long_key;
SET queen.kv_batch_max_ops = 1;
SELECT regress.err($$SELECT queen.kv('[{"op": "get", "ns": "e", "key": "a"}, {"op": "get",
    "ns": "e", "key": "b"}]')$$) AS kv_over_max_ops;
RESET queen.kv_batch_max_ops;
SELECT regress.err($$SELECT queen.transaction('{"operations": [], "kv": [{"op": "getPrefix",
    "ns": "e", "prefix": "a"}]}')$$) AS kv_prefix_in_txn;
SELECT regress.err($$SELECT queen.locks('{"operations": [{"op": "acquire", "name": "l"}]}')$$)
    AS lock_no_ttl;
SELECT regress.err($$SELECT queen.timer_schedule('e', 'k', '1', 1000,
    '')$$) AS timer_empty_partition;
SELECT regress.err($$SELECT queen.timers('{"operations": []}')$$) AS timers_empty;
SELECT regress.err($$SELECT queen.timers('{"operations": [{"op": "schedule", "queue": "e",
    "timerKey": "k",
    "delayMs": 1, "payload": "%%%"}]}')$$) AS timer_not_base64;
SELECT regress.err($$SELECT queen.timers('{"operations": [{"op": "schedule", "queue": "e",
    "timerKey": "k",
    "delayMs": 1, "payload": "e3g="}]}')$$) AS timer_not_json;
SELECT count(*) AS timers_made FROM queen.log_timers WHERE queue = 'e';

-- A retention step runs at READ COMMITTED only.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT regress.err($$SELECT queen_internal.log_retention_step_v1(0, NULL, NULL,
    10)$$) AS repeatable_read;
ROLLBACK;
