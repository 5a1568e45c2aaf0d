-- Whether the live queue's incarnation $1 has the partition $2.
SELECT 1 AS present FROM queen.ephemeral_partitions WHERE incarnation = $1 AND partition = $2
