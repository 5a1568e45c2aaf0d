-- Makes a partition of a live queue, and its first bounds (none if
-- another transaction made it first).
WITH p AS (
    INSERT INTO queen.ephemeral_partitions (incarnation, partition)
    VALUES ($1, $2)
    ON CONFLICT (incarnation, partition) DO NOTHING
    RETURNING incarnation, partition
)
INSERT INTO queen.ephemeral_partition_states (incarnation, partition, ver)
SELECT incarnation, partition, 0 FROM p
