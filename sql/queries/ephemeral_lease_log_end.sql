-- Ends leases $4 of a group, each by version $5 with attempts $6: with $7
-- the version settles the lease ('infinity': acknowledged, or dropped past
-- the retry limit), without it hands it back ('-infinity': due to the
-- group again at once).
INSERT INTO queen.ephemeral_leases (incarnation, partition, grp, seq, ver, attempts, lease_until)
SELECT $1, $2, $3, u.s, u.v, u.a, CASE WHEN $7 THEN 'infinity'::timestamptz ELSE '-infinity'::timestamptz END
  FROM unnest($4::int8[], $5::int4[], $6::int4[]) AS u(s, v, a)
