SELECT key, value::text, version, CASE WHEN expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM expires_at) * 1000000)::int8 END AS expires_us,
       (extract(epoch FROM updated_at) * 1000000)::int8 AS updated_us
  FROM queen.kv WHERE ns = $1 AND key >= $2 AND starts_with(key, $3) AND expires_at > statement_timestamp() ORDER BY key LIMIT $4
