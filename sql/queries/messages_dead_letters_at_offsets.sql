-- The dead letters of partition $1 at the offsets $2, newest failure
-- first, as (message_offset, consumer_group, error, attempts). Each
-- consumer group that has dead letters on the partition is found in turn
-- (one probe of the (partition, group, offset) key each), as g(grp), and
-- its offsets probed: a probe by partition alone reads every dead letter
-- of the partition. The last row of g is NULL.
WITH RECURSIVE g(grp) AS (
    SELECT min(consumer_group) FROM queen.log_dlq WHERE partition_id = $1
  UNION ALL
    SELECT (SELECT min(d.consumer_group) FROM queen.log_dlq d
             WHERE d.partition_id = $1 AND d.consumer_group > g.grp)
      FROM g WHERE g.grp IS NOT NULL
)
SELECT d.message_offset, d.consumer_group, d.error, d.attempts
  FROM g CROSS JOIN LATERAL (
       SELECT d.id, d.message_offset, d.consumer_group, d.error, d.attempts, d.failed_at
         FROM queen.log_dlq d
        WHERE d.partition_id = $1 AND d.consumer_group = g.grp
          AND d.message_offset = ANY ($2) OFFSET 0) d
 WHERE g.grp IS NOT NULL
 ORDER BY d.failed_at DESC, d.id DESC
