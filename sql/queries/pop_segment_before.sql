-- The end of partition $1's last segment older than $2. Segments are
-- written in offset order with times that never go back, so when the oldest
-- is not older than $2 none is, and the scan back from the newest is not
-- made (it would read the whole partition).
SELECT end_offset FROM queen.log_segments
 WHERE partition_id = $1 AND created_at < $2
   AND (SELECT o.created_at FROM queen.log_segments o WHERE o.partition_id = $1
         ORDER BY o.base_offset LIMIT 1) < $2
ORDER BY base_offset DESC LIMIT 1
