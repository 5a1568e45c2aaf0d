SELECT (SELECT count(*)::int8 FROM queen.queues), count(*)::int8,
     COALESCE(sum(last_offset + 1 - log_start), 0)::int8,
     (SELECT count(*)::int8 FROM queen.log_dlq),
     (SELECT COALESCE(sum(pruned_failed_count), 0)::int8 FROM queen.queue_terminal_rollups)
FROM queen.log_partitions
