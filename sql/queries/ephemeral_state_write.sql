-- A queue's next tallies ($2 depth, $3 bytes, $4 to $6 the drops), as the
-- version after $7, the one read under the queue's lock. The one replaced
-- stays for the retention cycle's compaction (ephemeral_compact.sql).
INSERT INTO queen.ephemeral_tallies (incarnation, ver, depth, bytes, drops_bounds, drops_ttl, drops_retry)
VALUES ($1, $7 + 1, $2, $3, $4, $5, $6)
