INSERT INTO queen.kv AS k (ns, key, value, version, expires_at)
SELECT n, kk, 'null', 0, '-infinity' FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(n, kk, o) ORDER BY o
ON CONFLICT (ns, key) DO UPDATE SET version = k.version WHERE false
RETURNING k.ns, k.key
