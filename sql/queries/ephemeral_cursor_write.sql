-- A group's cursor in a partition moves: the version $6 it had (NULL:
-- none) is replaced by the next. Only a pop writes a cursor, holding its
-- partition's bounds locked.
WITH gone AS (
    DELETE FROM queen.ephemeral_cursors
     WHERE incarnation = $1 AND partition = $2 AND grp = $3 AND ver = $6
)
INSERT INTO queen.ephemeral_cursors (incarnation, partition, grp, ver, next_seq, skipped)
VALUES ($1, $2, $3, COALESCE($6 + 1, 0), $4, $5)
