-- The list and overview readers: list_queues, overview, queue_counts,
-- get_queue, table_sizes, retention_explain, retention_timeseries and
-- sweeper_metrics. overview counts every queue of the database: shown as
-- what this file's own writes add to it.

SELECT queen.overview()::jsonb AS before \gset
SELECT count(*) AS pushed FROM json_array_elements(queen.push('[
  {"queue": "rd_a", "partition": "x", "payload": 1, "transactionId": "x1"},
  {"queue": "rd_a", "partition": "x", "payload": 2, "transactionId": "x2"},
  {"queue": "rd_a", "partition": "y", "payload": 3, "transactionId": "y1"}]'));
SELECT queen.configure('rd_b', '{"namespace": "rd", "task": "bill"}')->'created' AS created;
SELECT queen.pop('rd_a', 'y', NULL, 1) AS p \gset
SELECT * FROM regress.acked(queen.ack(regress.acks(:'p', 'dlq', NULL, 'no')));

SELECT k AS field, (queen.overview()::jsonb->>k)::int8 - (:'before'::jsonb->>k)::int8 AS added
  FROM unnest(ARRAY['queues', 'partitions', 'messages', 'failed', 'pruned_failed', 'namespaces', 'tasks']) k
 ORDER BY 1;
SELECT (SELECT json_agg(k ORDER BY k) FROM json_object_keys(queen.overview()) k) AS overview_fields;
SELECT q->>'name' AS name, q->>'namespace' AS namespace, q->>'task' AS task,
       q->'partitions' AS partitions, q->'messages' AS messages, q->'failed' AS failed,
       q->'pruned_failed' AS pruned_failed
  FROM json_array_elements(queen.list_queues()->'queues') q
 WHERE q->>'name' LIKE 'rd\_%' ORDER BY 1;
SELECT (SELECT json_agg(k ORDER BY k) FROM json_object_keys(q) k) AS list_fields
  FROM json_array_elements(queen.list_queues()->'queues') q WHERE q->>'name' = 'rd_a';
SELECT queen.queue_counts('rd_a')::jsonb AS counts;
SELECT queen.queue_counts('rd_b')::jsonb AS counts;
SELECT p->>'name' AS partition, p->'lastOffset' AS last_offset, p->'logStart' AS log_start
  FROM json_array_elements(queen.get_queue('rd_a')->'partitions') p ORDER BY 1;

-- table_sizes: the extension's largest tables, at most 20 (which ones
-- depends on their sizes, so only what holds for any of them is shown).
SELECT count(*) AS tables,
    bool_and((t->>'totalBytes')::int8 >= (t->>'tableBytes')::int8) AS totals_cover_tables,
    bool_and(t->>'table' LIKE 'queen.%') AS all_of_queen
  FROM json_array_elements(queen.table_sizes()) t;

-- retention_explain: what pins each partition (retention is off here).
SELECT e->'queue' AS queue,
    (SELECT json_agg(k ORDER BY k) FROM json_object_keys(e->'cutoffs') k) AS cutoffs
  FROM queen.retention_explain('rd_a') e;
SELECT p->>'partition' AS partition, p->'logStart' AS log_start, p->'lastOffset' AS last_offset,
       p->'boundary' AS boundary, p->'nextCycleDeletes' AS next_cycle_deletes,
       p->'slowestGroup' AS slowest_group, p->'pinnedBy' AS pinned_by
  FROM json_array_elements(queen.retention_explain('rd_a')->'partitions') p ORDER BY 1;
SELECT json_array_length(queen.retention_explain('rd_a', 1)->'partitions') AS capped;
-- Nothing was reclaimed in this database.
SELECT queen.retention_timeseries(now() - interval '1 day')::text AS timeseries;
SELECT queen.retention_timeseries(now() - interval '1 day', 'minute')::text AS by_minute;

-- sweeper_metrics: shared memory since the server started; its fields.
SELECT json_agg(k ORDER BY k) AS metrics FROM json_object_keys(queen.sweeper_metrics()) k;

-- maintenance_status: one entry per maintenance task, by name, with its
-- schedule and last outcome.
SELECT t->>'task' AS task, (t->>'enabled')::bool AS enabled,
       t->'nextDueAt' IS NOT NULL AS has_due
  FROM json_array_elements(queen.maintenance_status()) t;
SELECT json_agg(k ORDER BY k) AS fields
  FROM json_object_keys(queen.maintenance_status()->0) k;
