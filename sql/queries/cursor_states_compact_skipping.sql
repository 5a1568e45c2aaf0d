-- The replaced states of the cursors $1, at most $2 of them, deleted as
-- cursor_states_compact_waiting.sql deletes them, leaving the states another
-- transaction holds locked (SKIP LOCKED: each state is locked before it is
-- deleted, which costs a second write per state, so this runs only after
-- the waiting statement met such a lock). Answers the cursor of each state
-- deleted.
WITH old AS MATERIALIZED (
    SELECT s.ctid
      FROM unnest($1::int8[]) AS k(id)
     CROSS JOIN LATERAL (SELECT n.seq FROM queen.log_cursor_states n
                          WHERE n.cursor_id = k.id ORDER BY n.seq DESC LIMIT 1) n
     CROSS JOIN LATERAL (SELECT s.ctid FROM queen.log_cursor_states s
                          WHERE s.cursor_id = k.id AND s.seq < n.seq
                          ORDER BY s.seq LIMIT $2
                            FOR UPDATE SKIP LOCKED) s
     LIMIT $2
)
DELETE FROM queen.log_cursor_states d
 WHERE d.ctid = ANY (ARRAY(SELECT ctid FROM old))
RETURNING d.cursor_id
