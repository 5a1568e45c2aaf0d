SELECT (SELECT count(*)::int8 FROM queen.queues) AS queues, count(*)::int8 AS partitions,
     COALESCE(sum(last_offset + 1 - log_start), 0)::int8 AS messages,
     (SELECT count(*)::int8 FROM queen.log_dlq) AS failed,
     (SELECT COALESCE(sum(pruned_failed_count), 0)::int8 FROM queen.queue_terminal_rollups) AS pruned_failed
FROM queen.log_partitions
