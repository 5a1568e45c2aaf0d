-- (after cursor_replace.sql) The cursor's next state: at $3, the lease's
-- states $4, the rest as it was.
SELECT cursor_id, seq + 1, $3, lease_id, lease_expires_at, lease_start, lease_end, $4,
       head_offset, head_attempts, retry_at
  FROM held
