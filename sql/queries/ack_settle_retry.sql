-- The cursor state ($1, $2) (cursor id, seq), which this transaction holds
-- locked and has found to be its cursor's newest (ack_lock_consumer.sql,
-- then cursor_state_replaced.sql), read by its key and followed by its next
-- state at seq + 1 once its lease ended: at $3, no lease, head $4 delivered
-- $5 times, redelivered after $6 ms (NULL: at once). The held state stays:
-- the retention cycle deletes replaced states in bulk
-- (docs/architecture.md, "MVCC"). A state at seq + 1 already there was
-- written by another transaction that held the same state: in READ
-- COMMITTED the insert answers no row (the caller answers 40001); in
-- REPEATABLE READ PostgreSQL answers 40001 itself. Either way nothing is
-- written twice.
WITH held AS (
    SELECT h.* FROM queen.log_cursor_states h
     WHERE h.cursor_id = $1 AND h.seq = $2
)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                     lease_end, lease_state, head_offset, head_attempts, retry_at)
SELECT cursor_id, seq + 1, $3, NULL, NULL, NULL, NULL, NULL, $4, $5,
       CASE WHEN $6::int4 IS NULL THEN NULL ELSE now() + make_interval(secs => $6::int4 / 1000.0) END
  FROM held
ON CONFLICT (cursor_id, seq) DO NOTHING
RETURNING cursor_id
