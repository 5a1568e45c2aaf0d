WITH page AS MATERIALIZED (
    SELECT ns, key, expires_at > statement_timestamp() AS live,
           octet_length(key) + octet_length(value::text) AS b
      FROM queen.kv WHERE (ns, key) > ($1, $2) AND expires_at > '-infinity'
     ORDER BY ns, key LIMIT $3),
last AS (SELECT ns, key FROM page ORDER BY ns DESC, key DESC LIMIT 1)
SELECT p.ns, count(*) FILTER (WHERE live) AS keys, coalesce(sum(b) FILTER (WHERE live), 0)::int8 AS bytes,
       count(*) FILTER (WHERE NOT live) AS expired, (SELECT ns FROM last) AS last_ns,
       (SELECT key FROM last) AS last_key
  FROM page p GROUP BY p.ns
