-- One bounded step of removing an ended incarnation's rows: at most $2 of
-- each kind.
WITH m AS (
    DELETE FROM queen.ephemeral_messages
     WHERE (incarnation, partition, seq) IN (
           SELECT incarnation, partition, seq FROM queen.ephemeral_messages
            WHERE incarnation = $1 LIMIT $2)
    RETURNING 1
), l AS (
    DELETE FROM queen.ephemeral_leases
     WHERE (incarnation, partition, grp, seq) IN (
           SELECT incarnation, partition, grp, seq FROM queen.ephemeral_leases
            WHERE incarnation = $1 LIMIT $2)
    RETURNING 1
), c AS (
    DELETE FROM queen.ephemeral_cursors
     WHERE (incarnation, partition, grp) IN (
           SELECT incarnation, partition, grp FROM queen.ephemeral_cursors
            WHERE incarnation = $1 LIMIT $2)
    RETURNING 1
), p AS (
    DELETE FROM queen.ephemeral_partitions
     WHERE (incarnation, partition) IN (
           SELECT incarnation, partition FROM queen.ephemeral_partitions
            WHERE incarnation = $1 LIMIT $2)
    RETURNING 1
), g AS (
    DELETE FROM queen.ephemeral_groups
     WHERE (incarnation, grp) IN (
           SELECT incarnation, grp FROM queen.ephemeral_groups
            WHERE incarnation = $1 LIMIT $2)
    RETURNING 1
)
SELECT ((SELECT count(*) FROM m) + (SELECT count(*) FROM l) + (SELECT count(*) FROM c)
        + (SELECT count(*) FROM p) + (SELECT count(*) FROM g))::bigint AS removed
