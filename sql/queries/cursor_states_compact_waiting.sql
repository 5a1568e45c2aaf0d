-- (ends cursor_states_compact.sql) Waiting for a held state.
                         ) s
     LIMIT $2
)
DELETE FROM queen.log_cursor_states d
 WHERE d.ctid = ANY (ARRAY(SELECT ctid FROM old))
RETURNING d.cursor_id
