-- Ends every group's leases on a partition's messages before $3 (removed).
DELETE FROM queen.ephemeral_leases
 WHERE incarnation = $1 AND partition = $2 AND seq < $3
