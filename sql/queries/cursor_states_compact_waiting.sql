-- The replaced states of the cursors $1, at most $2 of them, deleted: a
-- cursor's states below its newest (the first visible entry of a backward
-- probe), from its oldest up. A state another transaction holds locked
-- (only a lock granted on a state already replaced, which its holder is
-- about to find so) is waited for, within the lock_timeout the caller set:
-- past it the caller makes cursor_states_compact_skipping.sql instead.
-- Answers the cursor of each state deleted.
WITH old AS MATERIALIZED (
    SELECT s.ctid
      FROM unnest($1::int8[]) AS k(id)
     CROSS JOIN LATERAL (SELECT n.seq FROM queen.log_cursor_states n
                          WHERE n.cursor_id = k.id ORDER BY n.seq DESC LIMIT 1) n
     CROSS JOIN LATERAL (SELECT s.ctid FROM queen.log_cursor_states s
                          WHERE s.cursor_id = k.id AND s.seq < n.seq
                          ORDER BY s.seq LIMIT $2
                         ) s
     LIMIT $2
)
DELETE FROM queen.log_cursor_states d
 WHERE d.ctid = ANY (ARRAY(SELECT ctid FROM old))
RETURNING d.cursor_id
