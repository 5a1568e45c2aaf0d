-- A group's lease on one message (a schema before 0.9.0: a lease is a row;
-- ephemeral_lease_log_get.sql after).
SELECT 0::int4 AS ver, attempts AS attempts
  FROM queen.ephemeral_leases
 WHERE incarnation = $1 AND partition = $2 AND grp = $3 AND seq = $4
