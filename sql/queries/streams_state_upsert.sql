-- State rows of query $1 in source partition $2 written: keys $3, their
-- JSON values $4 (as text), one per key, stamped with the clock (a cycle
-- writes its state last: the stamp is close to its commit).
INSERT INTO queen.stream_state (query_id, partition_id, key, value, updated_at)
SELECT $1, $2, u.key, u.value::jsonb, clock_timestamp()
  FROM unnest($3::text[], $4::text[]) AS u(key, value)
ON CONFLICT (query_id, partition_id, key)
DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
