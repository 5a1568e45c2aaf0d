-- (A schema before 0.9.0.) Ends every group's leases on a partition's
-- messages from $3 (the tail before, below which none is left) to before $4
-- (removed). The range starts at the old tail: the leases a snapshot held
-- open elsewhere keeps below it are never read.
DELETE FROM queen.ephemeral_leases
 WHERE incarnation = $1 AND partition = $2 AND seq >= $3 AND seq < $4
