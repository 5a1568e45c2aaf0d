-- Whether lease $1 is held and unexpired on some cursor: by the cursor's
-- newest state (the lease index also finds the states it replaced, until
-- the retention cycle deletes them).
SELECT 1 FROM queen.log_cursor_states s
 WHERE s.lease_id = $1 AND s.lease_expires_at > now()
   AND NOT EXISTS (SELECT 1 FROM queen.log_cursor_states n
                    WHERE n.cursor_id = s.cursor_id AND n.seq > s.seq)
 LIMIT 1
