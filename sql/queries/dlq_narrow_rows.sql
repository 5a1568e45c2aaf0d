-- The narrow dead letters of partition $1 at offsets $2..$3. Each consumer
-- group that has dead letters on the partition is found in turn (g, one
-- probe of the (partition, group, offset) key each; its last row is NULL),
-- and each group's offsets probed: a probe by partition alone reads every
-- dead letter of the partition.
WITH RECURSIVE g(grp) AS (
    SELECT min(consumer_group) FROM queen.log_dlq WHERE partition_id = $1
  UNION ALL
    SELECT (SELECT min(d.consumer_group) FROM queen.log_dlq d
             WHERE d.partition_id = $1 AND d.consumer_group > g.grp)
      FROM g WHERE g.grp IS NOT NULL
)
SELECT d.id, d.message_offset
  FROM g CROSS JOIN LATERAL (
       SELECT d.id, d.message_offset FROM queen.log_dlq d
        WHERE d.partition_id = $1 AND d.consumer_group = g.grp
          AND d.message_offset BETWEEN $2 AND $3 AND d.created_at IS NULL OFFSET 0) d
 WHERE g.grp IS NOT NULL
