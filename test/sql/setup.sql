-- The extension in this database, and the helpers the other files print
-- their answers through: only fields that are the same on every run
-- (offsets, counts, statuses, payloads, names), never timestamps, lease ids,
-- ids the server mints or durations.
CREATE EXTENSION queen;
SELECT e.extversion = a.default_version AS default_version_installed
  FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
 WHERE e.extname = 'queen';
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'queen%' ORDER BY 1;

CREATE SCHEMA regress;

-- Runs a statement; answers 'ok', or the SQLSTATE and message of its error.
CREATE FUNCTION regress.err(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- A text with the partition ids the server numbers replaced by N (as in
-- 'partition 7' and the dead letter '"7/tx"'), and every UUID by <uuid>.
CREATE FUNCTION regress.no_ids(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT regexp_replace(regexp_replace(regexp_replace(t,
               'partition \d+', 'partition N', 'g'),
               '"\d+/', '"N/', 'g'),
               '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g')
$$;

-- The head of a pop answer.
CREATE FUNCTION regress.popped(p json) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'success', p->'success', 'queue', p->'queue', 'partition', p->'partition',
        'consumerGroup', p->'consumerGroup', 'partitionsClaimed', p->'partitionsClaimed',
        'hasLeaseId', p->>'leaseId' IS NOT NULL, 'messages', json_array_length(p->'messages'))
$$;

-- The messages of a pop answer.
CREATE FUNCTION regress.msgs(p json)
RETURNS TABLE (queue text, partition text, "offset" int8, txn text, data jsonb,
               attempt int, retries int, grp text, leased bool)
LANGUAGE sql AS $$
    SELECT m->>'queue', m->>'partition', (m->>'offset')::int8, m->>'transactionId',
           (m->'data')::jsonb, (m->>'deliveryAttempt')::int, (m->>'retryCount')::int,
           m->>'consumerGroup', m->>'leaseId' IS NOT NULL
      FROM json_array_elements(p->'messages') m
$$;

-- An ack of every message of a pop answer with one status.
CREATE FUNCTION regress.acks(p json, status text, grp text DEFAULT NULL, error text DEFAULT NULL)
RETURNS jsonb LANGUAGE sql AS $$
    SELECT COALESCE(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
               'transactionId', m->>'transactionId', 'partitionId', m->>'partitionId',
               'leaseId', m->>'leaseId', 'status', status, 'consumerGroup', grp,
               'error', error))), '[]')
      FROM json_array_elements(p->'messages') m
$$;

-- The answers of an ack call.
CREATE FUNCTION regress.acked(a json)
RETURNS TABLE (idx int, txn text, status text, grp text, success bool, error text)
LANGUAGE sql AS $$
    SELECT (r->>'index')::int, r->>'transactionId', r->>'status', r->>'consumerGroup',
           (r->>'success')::bool, regress.no_ids(r->>'error')
      FROM json_array_elements(
               CASE WHEN json_typeof(a) = 'array' THEN a ELSE json_build_array(a) END) r
$$;

-- The answers of a push call.
CREATE FUNCTION regress.pushed(a json)
RETURNS TABLE (idx int, queue text, partition text, txn text, "offset" int8, status text)
LANGUAGE sql AS $$
    SELECT (r->>'index')::int, r->>'queue', r->>'partition',
           CASE WHEN r->>'transactionId' = r->>'messageId' THEN '(minted)'
                ELSE r->>'transactionId' END,
           (r->>'offset')::int8, r->>'status'
      FROM json_array_elements(a) r
$$;
