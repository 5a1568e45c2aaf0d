-- A push or a pop named queue $1 (its incarnation) and, for a pop, group
-- $2 (NULL for a push): the group is registered, and the note of when each
-- was last named is written when it is older than $3 seconds (a declared
-- queue, $4, never expires: only its group is noted). A note written within
-- $3 seconds stays as it is: no new version per call.
WITH registered AS (
    INSERT INTO queen.ephemeral_groups (incarnation, grp)
    SELECT $1, $2 WHERE $2 IS NOT NULL
    ON CONFLICT (incarnation, grp) DO NOTHING
)
INSERT INTO queen.ephemeral_seen AS s (incarnation, grp, seen_at)
SELECT $1, u.grp, clock_timestamp()
  FROM unnest(ARRAY[CASE WHEN NOT $4 THEN '' END, $2]) AS u(grp)
 WHERE u.grp IS NOT NULL
ON CONFLICT (incarnation, grp) DO UPDATE SET seen_at = excluded.seen_at
 WHERE s.seen_at < excluded.seen_at - $3 * interval '1 second'
