-- Failed or retry acks of messages $4: each is due to the group again at
-- once (a schema before 0.9.0: a lease is a row; after, a hand-back is a
-- version of it, ephemeral_lease_log_end.sql).
UPDATE queen.ephemeral_leases
   SET lease_until = '-infinity'
 WHERE incarnation = $1 AND partition = $2 AND grp = $3 AND seq = ANY ($4::int8[])
