-- Up to $4 leases of a group in a partition that ran out or were handed
-- back, oldest message first, with the message if it is still stored. A
-- lease is a series of versions (a delivery, a hand-back, a settlement);
-- the newest is its state, and a settled one ('infinity') is never due.
-- The leases below the partition's tail $5 are gone: the scan starts there.
-- A lease's newest version is found by a subquery on its whole key (as a
-- join, a plan made without statistics read the group's every lease for
-- each one).
SELECT l.seq AS seq, l.ver AS ver, l.attempts AS attempts,
       l.lease_until = '-infinity' AS handed_back, m.payload::text AS payload
  FROM queen.ephemeral_leases l
  LEFT JOIN queen.ephemeral_messages m
    ON m.incarnation = l.incarnation AND m.partition = l.partition AND m.seq = l.seq
 WHERE l.incarnation = $1 AND l.partition = $2 AND l.grp = $3 AND l.seq >= $5
   AND l.lease_until <= clock_timestamp()
   AND l.ver = (SELECT max(n.ver) FROM queen.ephemeral_leases n
                 WHERE n.incarnation = $1 AND n.partition = $2 AND n.grp = $3
                   AND n.seq = l.seq)
 ORDER BY l.seq
 LIMIT $4
