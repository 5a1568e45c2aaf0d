-- The cursor state ($1, $2) (cursor id, seq), which this transaction holds
-- locked (pop_take_cursor.sql or pop_take_cursor_deleted.sql), read by its
-- key and followed by its next state at seq + 1: offsets $6..$7 leased
-- under $4 for $5 seconds, one byte of state each ($8), the cursor at $3,
-- $9 deliveries of the head. The held state stays: the retention cycle
-- deletes replaced states in bulk (docs/architecture.md, "MVCC"). A state
-- at seq + 1 already there was written by another transaction that held the
-- same state: in READ COMMITTED the insert answers no row (the pop passes
-- the partition by); in REPEATABLE READ PostgreSQL answers 40001 itself.
-- Either way nothing is written twice.
WITH held AS (
    SELECT h.* FROM queen.log_cursor_states h
     WHERE h.cursor_id = $1 AND h.seq = $2
)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                     lease_end, lease_state, head_offset, head_attempts, retry_at)
SELECT cursor_id, seq + 1, $3, $4, now() + make_interval(secs => $5), $6, $7, $8, $6, $9, NULL
  FROM held
ON CONFLICT (cursor_id, seq) DO NOTHING
RETURNING cursor_id
