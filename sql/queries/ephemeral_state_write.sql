-- A queue's next tallies ($2 depth, $3 bytes, $4 to $6 the drops): the
-- version $7 this transaction holds locked is replaced by the next.
WITH gone AS (
    DELETE FROM queen.ephemeral_tallies WHERE incarnation = $1 AND ver = $7
)
INSERT INTO queen.ephemeral_tallies (incarnation, ver, depth, bytes, drops_bounds, drops_ttl, drops_retry)
VALUES ($1, $7 + 1, $2, $3, $4, $5, $6)
