SELECT (extract(epoch FROM date_trunc($2, executed_at)) * 1000000)::int8 AS bucket_us, retention_type,
      sum(messages_deleted)::int8 AS messages, sum(segments_deleted)::int8 AS segments
 FROM queen.retention_history
WHERE executed_at >= $1 AND retention_type NOT LIKE '\_\_%'
GROUP BY 1, 2 ORDER BY 1, 2
