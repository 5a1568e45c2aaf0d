SELECT COALESCE(error, '') AS error, count(*)::int8 AS count
  FROM queen.log_dlq GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $1
