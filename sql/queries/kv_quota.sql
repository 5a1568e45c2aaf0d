WITH del AS (DELETE FROM queen.kv_quota WHERE ns = $1 AND $2::int8 IS NULL AND $3::int8 IS NULL)
INSERT INTO queen.kv_quota (ns, max_keys, max_bytes) SELECT $1, $2, $3 WHERE $2 IS NOT NULL OR $3 IS NOT NULL
ON CONFLICT (ns) DO UPDATE SET max_keys = EXCLUDED.max_keys, max_bytes = EXCLUDED.max_bytes, updated_at = now()
