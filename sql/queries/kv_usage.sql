SELECT coalesce(u.ns, q.ns) AS ns, u.keys, u.bytes, u.expired_present,
      to_char(u.rolled_up_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS rolled_up_at,
      q.max_keys, q.max_bytes
 FROM queen.kv_usage u FULL JOIN queen.kv_quota q ON q.ns = u.ns
WHERE $1::text IS NULL OR coalesce(u.ns, q.ns) = $1
ORDER BY 1
