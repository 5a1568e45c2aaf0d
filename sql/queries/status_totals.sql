-- The server-wide figures of the status and the overview: queues,
-- partitions, namespaces, tasks, leases held now, and dead letters.
SELECT (SELECT count(*) FROM queen.queues)::int8 AS queues,
       (SELECT count(*) FROM queen.log_partitions)::int8 AS partitions,
       (SELECT count(DISTINCT namespace) FROM queen.queues WHERE namespace IS NOT NULL)::int8 AS namespaces,
       (SELECT count(DISTINCT task) FROM queen.queues WHERE task IS NOT NULL)::int8 AS tasks,
       l.active, l.partitions_with_leases, l.batch_size,
       (SELECT count(*) FROM queen.log_dlq)::int8 AS dlq_current,
       (SELECT count(DISTINCT partition_id) FROM queen.log_dlq)::int8 AS dlq_partitions,
       (SELECT COALESCE(sum(pruned_failed_count), 0) FROM queen.queue_terminal_rollups)::int8 AS dlq_pruned
  FROM (SELECT count(*)::int8 AS active, count(DISTINCT partition_id)::int8 AS partitions_with_leases,
               COALESCE(sum(lease_end - lease_start + 1), 0)::int8 AS batch_size
          FROM queen.log_consumers
         WHERE lease_id IS NOT NULL AND lease_expires_at > now()) l
