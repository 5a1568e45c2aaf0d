-- The state rows of query $1 in source partition $2, by key: only keys in
-- $3 (all when NULL), starting with $4 (all when NULL), whose value's
-- windowEnd is a number at most $5 (a number's text; all when NULL); at
-- most $6 + 1 rows, so that the caller sees a read past its bound. Named
-- keys are probed one by one, a prefix starts the range scan; each is a
-- branch of its own. The answer is built here, each value as stored.
WITH r AS (
    SELECT key, value, updated_at
      FROM queen.stream_state
     WHERE $3::text[] IS NULL AND $4::text IS NULL
       AND query_id = $1 AND partition_id = $2
    UNION ALL
    SELECT key, value, updated_at
      FROM queen.stream_state
     WHERE $3::text[] IS NULL AND $4::text IS NOT NULL
       AND query_id = $1 AND partition_id = $2
       AND key >= $4 AND key < $7
    UNION ALL
    SELECT key, value, updated_at
      FROM queen.stream_state
     WHERE $3::text[] IS NOT NULL
       AND query_id = $1 AND partition_id = $2
       AND key = ANY ($3)
), kept AS (
    SELECT key, value, updated_at
      FROM r
     WHERE ($4::text IS NULL OR starts_with(key, $4))
       AND ($5::text IS NULL
            OR (jsonb_typeof(value -> 'windowEnd') = 'number'
                AND (value ->> 'windowEnd')::numeric <= $5::numeric))
     ORDER BY key
     LIMIT $6 + 1
)
SELECT count(*) AS n,
       json_build_object(
           'success', true,
           'rows', COALESCE(json_agg(json_build_object('key', key, 'value', value, 'updated_at', updated_at)
                                     ORDER BY key), '[]'::json))::text AS answer
  FROM kept
