-- A partition's next bounds: the version $7 this transaction holds locked
-- is replaced by the next.
WITH gone AS (
    DELETE FROM queen.ephemeral_partition_states
     WHERE incarnation = $1 AND partition = $2 AND ver = $7
)
INSERT INTO queen.ephemeral_partition_states (incarnation, partition, ver, tail, head, depth, bytes)
VALUES ($1, $2, $7 + 1, $3, $4, $5, $6)
