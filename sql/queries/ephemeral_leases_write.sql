-- Leases messages $4 (with attempts $5) to a group for $6 seconds (a
-- schema before 0.9.0; ephemeral_lease_log_write.sql after).
INSERT INTO queen.ephemeral_leases AS l (incarnation, partition, grp, seq, attempts, lease_until)
SELECT $1, $2, $3, u.s, u.a, clock_timestamp() + $6 * interval '1 second'
  FROM unnest($4::int8[], $5::int4[]) AS u(s, a)
ON CONFLICT (incarnation, partition, grp, seq)
DO UPDATE SET attempts = excluded.attempts, lease_until = excluded.lease_until
