SELECT (SELECT count(*)::int8 FROM queen.queues) AS queues, count(*)::int8 AS partitions,
     COALESCE(sum(COALESCE(t.end_offset, p.log_start - 1) + 1 - p.log_start), 0)::int8 AS messages,
     (SELECT count(*)::int8 FROM queen.log_dlq) AS failed,
     (SELECT COALESCE(sum(pruned_failed_count), 0)::int8 FROM queen.queue_terminal_rollups) AS pruned_failed
FROM queen.log_partitions p
LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                    WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
