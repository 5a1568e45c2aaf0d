-- queen 0.7.0 -> 0.8.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.8.0 notes when a live ephemeral queue and each of its consumer groups
-- was last named by a push or a pop (queen.ephemeral_seen), so that the
-- retention cycle can forget a group no pop has named for
-- queen.ephemeral_group_idle_seconds (it stops holding back the removal of
-- what the other groups have read) and remove an empty implicit queue
-- unused for queen.ephemeral_implicit_idle_seconds. What is live when the
-- update runs counts as named at the update. No function changes; the new
-- table gets the rights every table has. This file is frozen once shipped.

CREATE UNLOGGED TABLE queen.ephemeral_seen (
    incarnation bigint NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    seen_at     timestamptz NOT NULL,
    PRIMARY KEY (incarnation, grp)
);
CREATE INDEX ephemeral_seen_at ON queen.ephemeral_seen (seen_at);
-- As sql/privileges.sql leaves every table of a fresh install: reached only
-- through the functions.
REVOKE ALL ON queen.ephemeral_seen FROM PUBLIC;

INSERT INTO queen.ephemeral_seen (incarnation, grp, seen_at)
SELECT s.incarnation, '', now()
  FROM queen.ephemeral_state s
 WHERE NOT EXISTS (SELECT 1 FROM queen.ephemeral_queues d WHERE d.queue = s.queue)
UNION ALL
SELECT g.incarnation, g.grp, now()
  FROM queen.ephemeral_groups g
  JOIN queen.ephemeral_state s ON s.incarnation = g.incarnation;
