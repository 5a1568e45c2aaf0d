-- Each consumer group that has dead letters on partition $1, found in turn
-- (one probe of the (partition, group, offset) key each), as g(grp), for
-- the statement that follows to probe each group's offsets: a probe by
-- partition alone reads every dead letter of the partition. The last row
-- of g is NULL.
WITH RECURSIVE g(grp) AS (
    SELECT min(consumer_group) FROM queen.log_dlq WHERE partition_id = $1
  UNION ALL
    SELECT (SELECT min(d.consumer_group) FROM queen.log_dlq d
             WHERE d.partition_id = $1 AND d.consumer_group > g.grp)
      FROM g WHERE g.grp IS NOT NULL
)
