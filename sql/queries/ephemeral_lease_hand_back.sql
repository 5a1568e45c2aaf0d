-- A failed or retry ack: the message is due to the group again at once.
UPDATE queen.ephemeral_leases
   SET lease_until = '-infinity'
 WHERE incarnation = $1 AND partition = $2 AND grp = $3 AND seq = $4
