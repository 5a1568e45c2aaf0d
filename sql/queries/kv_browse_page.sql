-- A page of namespace $1's keys in byte order, from $2 (inclusive) and
-- below $3 (exclusive; NULL: no upper bound), starting with $4 (NULL: any
-- key), at most $5 rows; expired rows (not yet pruned) too when $6.
SELECT key, value::text AS value, version,
       CASE WHEN expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM expires_at) * 1000000)::int8 END AS expires_us,
       (extract(epoch FROM updated_at) * 1000000)::int8 AS updated_us,
       (expires_at <= statement_timestamp()) AS expired
  FROM queen.kv
 WHERE ns = $1 AND key >= $2 AND ($3::text IS NULL OR key < $3)
   AND ($4::text IS NULL OR starts_with(key, $4))
   AND ($6 OR expires_at > statement_timestamp())
 ORDER BY key LIMIT $5
