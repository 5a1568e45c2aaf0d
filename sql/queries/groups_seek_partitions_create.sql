-- Where group $2's cursor goes on every partition of queue $1 or, $5 given,
-- on partition $5 alone (probed by its whole key, in a branch of its own):
-- 'beginning', 'end' (the end of the partition's newest segment; without
-- one, just before log_start) or the last segment older than $4 ($3), found
-- as pop_segment_before.sql finds it. Then the cursors the group lacks on
-- those partitions, made where the seek puts them; one row per target
-- partition.
WITH target AS MATERIALIZED (
SELECT p.id AS pid,
       CASE $3 WHEN 'beginning' THEN p.log_start - 1
               WHEN 'end' THEN COALESCE(t.end_offset, p.log_start - 1)
               ELSE GREATEST(p.log_start - 1, COALESCE(
                   (SELECT s.end_offset FROM queen.log_segments s
                     WHERE s.partition_id = p.id AND s.created_at < $4::timestamptz
                       AND (SELECT o.created_at FROM queen.log_segments o WHERE o.partition_id = p.id
                             ORDER BY o.base_offset LIMIT 1) < $4::timestamptz
                     ORDER BY s.base_offset DESC LIMIT 1), -1)) END AS committed
  FROM (SELECT a.id, a.log_start FROM queen.log_partitions a
         WHERE $5::text IS NULL AND a.queue_id = $1
        UNION ALL
        SELECT b.id, b.log_start FROM queen.log_partitions b
         WHERE b.queue_id = $1 AND b.name = $5) p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 ORDER BY p.id
), made AS (
    INSERT INTO queen.log_cursors (partition_id, consumer_group)
    SELECT pid, $2 FROM target ORDER BY pid
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
    RETURNING id, partition_id
), first AS (
    INSERT INTO queen.log_cursor_states (cursor_id, seq, committed)
    SELECT m.id, 0, t.committed FROM made m JOIN target t ON t.pid = m.partition_id
)
SELECT pid AS moved FROM target
