-- A new, empty partition of a live queue.
INSERT INTO queen.ephemeral_partitions (incarnation, partition)
VALUES ($1, $2)
ON CONFLICT (incarnation, partition) DO NOTHING
