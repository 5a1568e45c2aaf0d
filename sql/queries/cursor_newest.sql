-- The newest state of group $2's cursor on partition $1 (which this
-- transaction holds locked), deleted; the part that follows
-- (pop_lease_cursor.sql, pop_release_cursor.sql, ack_settle_advance.sql,
-- ack_settle_retry.sql) selects the state that takes its place.
WITH prev AS (
    SELECT s.*
      FROM queen.log_cursors k
     CROSS JOIN LATERAL (SELECT s.* FROM queen.log_cursor_states s
                          WHERE s.cursor_id = k.id ORDER BY s.seq DESC LIMIT 1) s
     WHERE k.partition_id = $1 AND k.consumer_group = $2
), gone AS (
    DELETE FROM queen.log_cursor_states d USING prev
     WHERE d.cursor_id = prev.cursor_id AND d.seq = prev.seq
 RETURNING d.*
)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                     lease_end, lease_state, head_offset, head_attempts, retry_at)
