-- The dead letters of a partition at some offsets, newest failure first,
-- each group's probed in turn (dlq_partition_groups.sql goes before this).
SELECT d.message_offset, d.consumer_group, d.error, d.attempts
  FROM g CROSS JOIN LATERAL (
       SELECT d.id, d.message_offset, d.consumer_group, d.error, d.attempts, d.failed_at
         FROM queen.log_dlq d
        WHERE d.partition_id = $1 AND d.consumer_group = g.grp
          AND d.message_offset = ANY ($2) OFFSET 0) d
 WHERE g.grp IS NOT NULL
 ORDER BY d.failed_at DESC, d.id DESC
