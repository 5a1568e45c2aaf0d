-- (after cursor_replace.sql) The cursor's next state once its lease ended:
-- at $3, no lease, head $4 delivered $5 times, redelivered after $6 ms
-- (NULL: at once).
SELECT cursor_id, seq + 1, $3, NULL, NULL, NULL, NULL, NULL, $4, $5,
       CASE WHEN $6::int4 IS NULL THEN NULL ELSE now() + make_interval(secs => $6::int4 / 1000.0) END
  FROM held
