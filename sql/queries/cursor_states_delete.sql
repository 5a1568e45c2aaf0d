-- The states of the cursors $1 (deleted, or about to be with their
-- partitions). A transaction holding a cursor's newest state is waited
-- for; the state it put in its place is seen by the next run of this
-- statement, which the caller makes until one deletes nothing.
DELETE FROM queen.log_cursor_states WHERE cursor_id = ANY($1) RETURNING 1
