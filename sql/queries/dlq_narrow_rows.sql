-- The narrow dead letters of partition $1 at offsets $2..$3, each group's
-- probed in turn (dlq_partition_groups.sql goes before this).
SELECT d.id, d.message_offset
  FROM g CROSS JOIN LATERAL (
       SELECT d.id, d.message_offset FROM queen.log_dlq d
        WHERE d.partition_id = $1 AND d.consumer_group = g.grp
          AND d.message_offset BETWEEN $2 AND $3 AND d.created_at IS NULL OFFSET 0) d
 WHERE g.grp IS NOT NULL
