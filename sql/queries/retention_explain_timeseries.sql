SELECT (extract(epoch FROM date_trunc($2, executed_at)) * 1000000)::int8, retention_type,
      sum(messages_deleted)::int8, sum(segments_deleted)::int8
 FROM queen.retention_history
WHERE executed_at >= $1 AND retention_type NOT LIKE '\_\_%'
GROUP BY 1, 2 ORDER BY 1, 2
