DELETE FROM queen.kv WHERE ctid = ANY (ARRAY(
    SELECT v.ctid FROM generate_series(0, 63) AS g(i)
    CROSS JOIN LATERAL (
        SELECT k.ctid FROM queen.kv k
         WHERE k.shard = ((($1 + g.i) % 64 + 64) % 64)::smallint
           AND k.expires_at < 'infinity' AND k.expires_at <= statement_timestamp()
           AND k.expires_at > '-infinity'
         ORDER BY k.expires_at LIMIT $2
         FOR UPDATE SKIP LOCKED) v
    LIMIT $2))
  AND expires_at <= statement_timestamp() AND expires_at > '-infinity'
RETURNING 1
