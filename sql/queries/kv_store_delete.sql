DELETE FROM queen.kv k USING unnest($1::text[], $2::text[]) AS u(n, kk) WHERE k.ns = u.n AND k.key = u.kk
