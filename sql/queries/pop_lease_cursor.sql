-- (after cursor_replace.sql) The cursor's next state: offsets $6..$7 leased
-- under $4 for $5 seconds, one byte of state each ($8), the cursor at $3,
-- $9 deliveries of the head.
SELECT cursor_id, seq + 1, $3, $4, now() + make_interval(secs => $5), $6, $7, $8, $6, $9, NULL
  FROM held
