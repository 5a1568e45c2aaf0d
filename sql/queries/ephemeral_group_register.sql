-- A consumer group the queue has seen.
INSERT INTO queen.ephemeral_groups (incarnation, grp)
VALUES ($1, $2)
ON CONFLICT (incarnation, grp) DO NOTHING
