-- (after a seek's target, consumer_group_seek.sql or
-- groups_seek_partitions.sql) The cursors the group lacks on the target's
-- partitions, made where the seek puts them; one row per target partition.
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
