-- Whether lease $1 is held and unexpired on some cursor (only the newest
-- state of a cursor is visible to any snapshot).
SELECT 1 FROM queen.log_cursor_states WHERE lease_id = $1 AND lease_expires_at > now() LIMIT 1
