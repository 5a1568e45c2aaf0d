-- Every namespace holding a live key, with its live keys, by name.
SELECT ns, count(*)::int8 AS keys
  FROM queen.kv WHERE expires_at > statement_timestamp()
 GROUP BY ns ORDER BY ns
