-- One bounded step of removing an ended incarnation's rows: at most $2 of
-- each table.
WITH m AS (
    DELETE FROM queen.ephemeral_messages
     WHERE ctid = ANY (ARRAY(SELECT ctid FROM queen.ephemeral_messages WHERE incarnation = $1 LIMIT $2))
    RETURNING 1
),
l AS (
    DELETE FROM queen.ephemeral_leases
     WHERE ctid = ANY (ARRAY(SELECT ctid FROM queen.ephemeral_leases WHERE incarnation = $1 LIMIT $2))
    RETURNING 1
),
c AS (
    DELETE FROM queen.ephemeral_cursors
     WHERE ctid = ANY (ARRAY(SELECT ctid FROM queen.ephemeral_cursors WHERE incarnation = $1 LIMIT $2))
    RETURNING 1
),
v AS (
    DELETE FROM queen.ephemeral_partition_states
     WHERE ctid = ANY (ARRAY(SELECT ctid FROM queen.ephemeral_partition_states WHERE incarnation = $1 LIMIT $2))
    RETURNING 1
),
p AS (
    DELETE FROM queen.ephemeral_partitions
     WHERE ctid = ANY (ARRAY(SELECT ctid FROM queen.ephemeral_partitions WHERE incarnation = $1 LIMIT $2))
    RETURNING 1
),
g AS (
    DELETE FROM queen.ephemeral_groups
     WHERE ctid = ANY (ARRAY(SELECT ctid FROM queen.ephemeral_groups WHERE incarnation = $1 LIMIT $2))
    RETURNING 1
),
t AS (
    DELETE FROM queen.ephemeral_tallies
     WHERE ctid = ANY (ARRAY(SELECT ctid FROM queen.ephemeral_tallies WHERE incarnation = $1 LIMIT $2))
    RETURNING 1
)
SELECT ((SELECT count(*) FROM m) + (SELECT count(*) FROM l) + (SELECT count(*) FROM c) + (SELECT count(*) FROM v) + (SELECT count(*) FROM p) + (SELECT count(*) FROM g) + (SELECT count(*) FROM t))::bigint AS removed
