-- A group's lease on one message.
SELECT attempts AS attempts
  FROM queen.ephemeral_leases
 WHERE incarnation = $1 AND partition = $2 AND grp = $3 AND seq = $4
