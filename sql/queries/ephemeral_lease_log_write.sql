-- Leases messages $4 to a group for $7 seconds: each as version $5 of its
-- lease (0 on a first delivery, the next on a redelivery) with attempts $6.
INSERT INTO queen.ephemeral_leases (incarnation, partition, grp, seq, ver, attempts, lease_until)
SELECT $1, $2, $3, u.s, u.v, u.a, clock_timestamp() + $7 * interval '1 second'
  FROM unnest($4::int8[], $5::int4[], $6::int4[]) AS u(s, v, a)
