SELECT u.n, u.kk, k.value::text AS value, k.version,
       CASE WHEN k.expires_at = 'infinity' THEN NULL
            ELSE (extract(epoch FROM k.expires_at) * 1000000)::int8 END AS expires_us,
       (extract(epoch FROM k.created_at) * 1000000)::int8 AS created_us,
       (extract(epoch FROM k.updated_at) * 1000000)::int8 AS updated_us,
       q.max_keys, q.max_bytes, coalesce(s.keys, 0) AS used_keys, coalesce(s.bytes, 0) AS used_bytes,
       q.ns IS NOT NULL AS has_quota,
       (extract(epoch FROM statement_timestamp()) * 1000000)::int8 AS now_us,
       ARRAY(SELECT nextval('queen.kv_version_seq') FROM generate_series(1, $3)) AS versions
FROM unnest($1::text[], $2::text[]) AS u(n, kk)
LEFT JOIN queen.kv k ON k.ns = u.n AND k.key = u.kk AND k.expires_at > '-infinity'
LEFT JOIN queen.kv_quota q ON q.ns = u.n
LEFT JOIN queen.kv_usage s ON s.ns = u.n
