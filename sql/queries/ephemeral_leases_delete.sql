-- Ends a group's leases on messages $4.
DELETE FROM queen.ephemeral_leases
 WHERE incarnation = $1 AND partition = $2 AND grp = $3 AND seq = ANY($4::int8[])
