-- configure: create, merge, replace, null back to the default, and the
-- options read back by get_queue.

-- A create answers every option; omitted ones take their defaults.
SELECT c->'created' AS created, c->'queue' AS queue, c->'options' AS options
  FROM (SELECT queen.configure('cf')::jsonb AS c) x;
-- The options that differ from those of a queue made with none.
SELECT queen.configure('cf_defaults')->'created' AS created;
CREATE FUNCTION regress.changed(o jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT COALESCE(jsonb_object_agg(e.key, e.value ORDER BY e.key), '{}')
      FROM jsonb_each(o) e
     WHERE e.value IS DISTINCT FROM
           ((SELECT (queen.get_queue('cf_defaults'))::jsonb) -> 'options' -> e.key)
$$;

-- merge (the default mode) keeps what the body omits.
SELECT c->'created' AS created, regress.changed(c->'options') AS changed
  FROM (SELECT queen.configure('cf',
      '{"leaseTime": 30, "retryLimit": 5, "namespace": "ns1"}')::jsonb AS c) x;
SELECT c->'created' AS created, c->'namespace' AS namespace,
    regress.changed(c->'options') AS changed
  FROM (SELECT queen.configure('cf', '{"retryDelay": 250, "task": "t1"}', 'merge')::jsonb AS c) x;
-- A key sent as null goes back to its default.
SELECT regress.changed(c->'options') AS changed
  FROM (SELECT queen.configure('cf', '{"retryLimit": null, "namespace": null}')::jsonb AS c) x;
-- replace starts from the defaults.
SELECT regress.changed(c->'options') AS changed, c->'task' AS task
  FROM (SELECT queen.configure('cf', '{"priority": 4, "dedupWindowSeconds": 0}',
      'replace')::jsonb AS c) x;
-- What is stored is what get_queue reads back.
SELECT regress.changed(g->'options') AS changed, g->'name' AS name, g->'namespace' AS namespace,
       g->'task' AS task, g->'pruned_failed' AS pruned_failed,
           jsonb_array_length(g->'partitions') AS partitions
  FROM (SELECT queen.get_queue('cf')::jsonb AS g) x;
SELECT q.lease_time, q.retry_limit, q.retry_delay, q.priority, q.dedup_window_seconds
  FROM queen.queues q WHERE q.name = 'cf';
-- Every option at once, and the booleans.
SELECT regress.changed(c->'options') AS changed
  FROM (SELECT queen.configure('cf', '{
    "leaseTime": 5, "retryLimit": 0, "retryDelay": 0, "delayedProcessing": 1, "windowBuffer": 2,
    "dedupWindowSeconds": 10, "retentionEnabled": true, "retentionSeconds": 86400,
    "completedRetentionSeconds": 3600, "maxWaitTimeSeconds": 7200, "dlqRetentionSeconds": 604800,
    "priority": 7, "namespace": "n", "task": "t", "deadLetterQueue": true,
        "dlqAfterMaxRetries": true,
    "maxSize": 100, "maxQueueSize": 1000, "minPopWaitTime": 3, "encryptionEnabled": true}',
    'replace')::jsonb AS c) x;
-- A queue pushed into first exists with the defaults; configure then edits it.
SELECT count(*) AS pushed
    FROM json_array_elements(queen.push('[{"queue": "cf_pushed", "payload": 1}]'));
SELECT c->'created' AS created, regress.changed(c->'options') AS changed
  FROM (SELECT queen.configure('cf_pushed', '{"leaseTime": 15}')::jsonb AS c) x;
SELECT p->>'name' AS partition, p->'lastOffset' AS last_offset, p->'logStart' AS log_start
  FROM json_array_elements(queen.get_queue('cf_pushed')->'partitions') p;

-- What configure refuses.
SELECT regress.err($$SELECT queen.configure('cf', '{"leaseTimeout": 5}')$$) AS unknown_key;
SELECT regress.err($$SELECT queen.configure('cf', '{"leaseTime": "5"}')$$) AS wrong_type;
SELECT regress.err($$SELECT queen.configure('cf', '{"leaseTime": 0}')$$) AS out_of_range;
SELECT regress.err($$SELECT queen.configure('cf', '{"retryLimit": -1}')$$) AS negative;
SELECT regress.err($$SELECT queen.configure('cf', '{}', 'upsert')$$) AS bad_mode;
SELECT regress.err($$SELECT queen.configure('cf', '[]')$$) AS not_an_object;
SELECT regress.err($$SELECT queen.configure(NULL)$$) AS no_queue;
SELECT regress.err($$SELECT queen.configure('')$$) AS empty_name;
SELECT regress.err($$SELECT queen.get_queue('cf_none')$$) AS unknown_queue;
