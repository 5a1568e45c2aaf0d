-- The cursor state ($1, $2) (cursor id, seq), which this transaction holds
-- locked (pop_take_cursor.sql, ack_lock_consumer.sql), deleted by its key;
-- the part that follows (pop_lease_cursor.sql, pop_release_cursor.sql,
-- ack_settle_advance.sql, ack_settle_retry.sql) selects the state that
-- takes its place.
WITH gone AS (
    DELETE FROM queen.log_cursor_states d
     WHERE d.cursor_id = $1 AND d.seq = $2
 RETURNING d.*
)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                     lease_end, lease_state, head_offset, head_attempts, retry_at)
