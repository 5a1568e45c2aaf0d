-- Where group $2's cursor goes on every partition of queue $1: 'beginning',
-- 'end' (the end of the partition's newest segment; without one, just
-- before log_start) or the last segment older than $4 ($3). Then the
-- cursors the group lacks on those partitions, made where the seek puts
-- them; one row per target partition.
WITH target AS MATERIALIZED (
SELECT p.id AS pid,
       CASE $3 WHEN 'beginning' THEN p.log_start - 1
               WHEN 'end' THEN COALESCE(t.end_offset, p.log_start - 1)
               ELSE GREATEST(p.log_start - 1, COALESCE(
                   (SELECT s.end_offset FROM queen.log_segments s
                     WHERE s.partition_id = p.id AND s.created_at < $4::timestamptz
                     ORDER BY s.base_offset DESC LIMIT 1), -1)) END AS committed
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE p.queue_id = $1
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
