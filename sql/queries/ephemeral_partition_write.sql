-- A partition's next bounds, as the version after $7, the one read under
-- the queue's lock. The one replaced stays for the compaction.
INSERT INTO queen.ephemeral_partition_states (incarnation, partition, ver, tail, head, depth, bytes)
VALUES ($1, $2, $7 + 1, $3, $4, $5, $6)
