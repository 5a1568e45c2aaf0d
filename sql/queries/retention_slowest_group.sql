-- The consumer group furthest behind on partition $1 and the next offset it
-- would read there, which caps rule 2 (the retention step) and which
-- retention_explain names. Of the groups with a cursor on the partition,
-- and of those registered on its queue that have none there yet: such a
-- group has read nothing of it, and would read from the log's start
-- (subscribed to everything) or from the first segment written at or after
-- its subscription's instant (new, or a timestamp; created_at never
-- decreases with the offset; none written since: it holds nothing back).
-- No row when no group has a cursor on the partition: nothing is consumed,
-- and rule 2 deletes nothing.
WITH p AS (
    SELECT queue_id, log_start FROM queen.log_partitions WHERE id = $1
), read AS (
    SELECT consumer_group, committed + 1 AS next_offset
      FROM queen.log_consumers WHERE partition_id = $1
), waiting AS (
    SELECT g.consumer_group,
           CASE WHEN g.subscription_mode = 'all' THEN p.log_start
                ELSE (SELECT s.base_offset FROM queen.log_segments s
                       WHERE s.partition_id = $1
                         AND s.created_at >= CASE g.subscription_mode WHEN 'new' THEN g.created_at
                                                                      ELSE g.subscription_from END
                       ORDER BY s.base_offset LIMIT 1)
           END AS next_offset
      FROM p JOIN queen.consumer_groups g ON g.queue_id = p.queue_id
     WHERE EXISTS (SELECT 1 FROM read)
       AND NOT EXISTS (SELECT 1 FROM read r WHERE r.consumer_group = g.consumer_group)
)
SELECT consumer_group, next_offset
  FROM (SELECT consumer_group, next_offset FROM read
        UNION ALL
        SELECT consumer_group, next_offset FROM waiting WHERE next_offset IS NOT NULL) x
 ORDER BY next_offset, consumer_group
 LIMIT 1
