-- (ends cursor_states_compact.sql) Leaving the states another transaction
-- holds locked (SKIP LOCKED: each state is locked before it is deleted,
-- which costs a second write per state, so this runs only after the
-- waiting statement met such a lock).
                            FOR UPDATE SKIP LOCKED) s
     LIMIT $2
)
DELETE FROM queen.log_cursor_states d
 WHERE d.ctid = ANY (ARRAY(SELECT ctid FROM old))
RETURNING d.cursor_id
