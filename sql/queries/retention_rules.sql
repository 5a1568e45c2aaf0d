-- What each queue's options mean for retention: a select-list computing a
-- queue's four cutoffs (NULL disables a rule) from q (queen.queues) and
-- c.now. The sidecar's floor and the floor under DLQ retention are written
-- in as literals, in seconds.
    CASE WHEN q.retention_enabled AND q.retention_seconds > 0
         THEN c.now - make_interval(secs => q.retention_seconds) END AS all_cutoff,
    CASE WHEN q.retention_enabled AND q.completed_retention_seconds > 0
         THEN c.now - make_interval(secs => q.completed_retention_seconds) END AS completed_cutoff,
    c.now - make_interval(secs => GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, {floor})) AS txn_cutoff,
    CASE WHEN q.max_wait_time_seconds > 0
         THEN c.now - make_interval(secs => q.max_wait_time_seconds) END AS max_wait_cutoff,
    CASE WHEN q.dlq_retention_seconds > 0
         THEN c.now - make_interval(secs => GREATEST(q.dlq_retention_seconds, {failed_floor})) END AS dlq_cutoff
