-- Forgets at most $2 consumer groups no pop has named for $1 seconds,
-- oldest first: their note and their registration go, so the removal of
-- what the queue's other groups have read no longer waits for them. Their
-- cursors and leases stay: a group that comes back resumes where it was,
-- less what was removed meanwhile. A note a pop holds locked is passed by.
WITH idle AS (
    SELECT s.incarnation, s.grp
      FROM queen.ephemeral_seen s
     WHERE s.seen_at < clock_timestamp() - $1 * interval '1 second'
       AND s.grp <> ''
     ORDER BY s.seen_at
     LIMIT $2
       FOR UPDATE SKIP LOCKED
), noted AS (
    DELETE FROM queen.ephemeral_seen s
     USING idle i
     WHERE s.incarnation = i.incarnation AND s.grp = i.grp
    RETURNING s.incarnation, s.grp
), forgotten AS (
    DELETE FROM queen.ephemeral_groups g
     USING noted n
     WHERE g.incarnation = n.incarnation AND g.grp = n.grp
    RETURNING 1
)
SELECT (SELECT count(*) FROM forgotten)::bigint AS forgotten
