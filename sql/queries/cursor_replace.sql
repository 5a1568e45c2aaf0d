-- The cursor state ($1, $2) (cursor id, seq), which this transaction holds
-- locked and has found to be its cursor's newest (pop_take_cursor.sql,
-- ack_lock_consumer.sql, then cursor_state_replaced.sql), read by its key;
-- the part that follows (pop_lease_cursor.sql, pop_release_cursor.sql,
-- ack_settle_advance.sql, ack_settle_retry.sql) selects the state that
-- takes its place, at seq + 1, and cursor_replace_end.sql ends the
-- statement. The held state stays: the retention cycle deletes replaced
-- states in bulk (docs/architecture.md, "MVCC").
WITH held AS (
    SELECT h.* FROM queen.log_cursor_states h
     WHERE h.cursor_id = $1 AND h.seq = $2
)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                     lease_end, lease_state, head_offset, head_attempts, retry_at)
