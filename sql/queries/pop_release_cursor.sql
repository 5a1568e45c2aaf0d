-- (after cursor_replace.sql) The cursor's next state: at $3, no lease.
SELECT cursor_id, seq + 1, $3, NULL, now(), NULL, NULL, NULL, NULL, 0, NULL
  FROM held
