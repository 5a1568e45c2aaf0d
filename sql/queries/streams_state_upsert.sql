-- State rows of query $1 in source partition $2 written: keys $3, their
-- JSON values $4 (as text), one per key.
INSERT INTO queen.stream_state (query_id, partition_id, key, value)
SELECT $1, $2, u.key, u.value::jsonb
  FROM unnest($3::text[], $4::text[]) AS u(key, value)
ON CONFLICT (query_id, partition_id, key)
DO UPDATE SET value = EXCLUDED.value, updated_at = now()
