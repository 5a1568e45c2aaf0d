-- Sets a group's cursor in a partition.
-- ($6, the version a schema of versions holds, is not used here.)
INSERT INTO queen.ephemeral_cursors AS c (incarnation, partition, grp, next_seq, skipped)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (incarnation, partition, grp)
DO UPDATE SET next_seq = excluded.next_seq, skipped = excluded.skipped
