-- A group's cursor in a partition moves: the version after $6 (NULL: it
-- had none), written by a pop under the queue's lock. The one replaced
-- stays for the compaction.
INSERT INTO queen.ephemeral_cursors (incarnation, partition, grp, ver, next_seq, skipped)
VALUES ($1, $2, $3, COALESCE($6 + 1, 0), $4, $5)
