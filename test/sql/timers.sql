-- Timers: schedule, reschedule, cancel, the batch call, and a fire by hand
-- (queen_internal.sweeper_run_once) delivering a due timer into its queue.
-- This database is not the workers' one: nothing fires on its own here.

SELECT (t::jsonb) - 'messageId' - 'deliverAt' AS scheduled
  FROM queen.timer_schedule('tm', 'remind-1', '{"id": 1}', 3600000, 'p1', 'tm-txn-1') t;
SELECT (t::jsonb) - 'messageId' - 'deliverAt' AS rescheduled
  FROM queen.timer_schedule('tm', 'remind-1', '{"id": 1, "again": true}', 7200000, 'p1',
      'tm-txn-1') t;
SELECT queue, timer_key, partition, deliver_at > now() + interval '1 hour' AS later
  FROM queen.log_timers WHERE queue = 'tm';
SELECT (t::jsonb) AS cancelled FROM queen.timer_cancel('tm', 'remind-1') t;
SELECT (t::jsonb) AS absent FROM queen.timer_cancel('tm', 'remind-1') t;

-- The batch call: payloads as base64 ({"n":2} and {"n":3}).
SELECT x->>'status' AS status, x->>'timerKey' AS timer_key, x->'ok' AS ok,
    x->>'transactionId' AS txn
  FROM json_array_elements(queen.timers('{"operations": [
    {"op": "schedule", "queue": "tm", "timerKey": "t2", "delayMs": 0, "txn": "tm-2",
     "payload": "eyJuIjoyfQ=="},
    {"op": "schedule", "queue": "tm", "timerKey": "t3", "delayMs": 3600000, "txn": "tm-3",
     "payload": "eyJuIjozfQ=="},
    {"op": "reschedule", "queue": "tm", "timerKey": "t3", "delayMs": -1000, "txn": "tm-3",
     "payload": "eyJuIjozfQ=="},
    {"op": "reschedule", "queue": "tm", "timerKey": "nope", "delayMs": 1000, "payload": "MQ=="},
    {"op": "cancel", "queue": "tm", "timerKey": "nope"}]}')->'results') x;
SELECT timer_key FROM queen.log_timers WHERE queue = 'tm' ORDER BY 1;

-- Both are due: one sweep by hand fires them into the queue.
SELECT (r->'fired')::text AS fired FROM queen_internal.sweeper_run_once() r;
SELECT jsonb_array_length((queen.timers_list('tm')::jsonb)->'rows') AS left;
SELECT partition, txn, data FROM regress.msgs(queen.pop('tm', NULL, NULL, 10,
    '{"autoAck": true}')) ORDER BY txn;
SELECT (r->'fired')::text AS fired FROM queen_internal.sweeper_run_once() r;
SELECT x->'timersSetAside' AS set_aside FROM queen.sweeper_metrics() x;
SELECT (t::jsonb) AS set_aside FROM queen.timers_set_aside('tm') t;
