-- Up to $4 leases of a group in a partition that ran out or were handed
-- back, oldest message first, with the message if it is still stored.
-- The leases below the partition's tail $5 are gone: the scan starts
-- there, past the deleted ones a snapshot held open elsewhere keeps. (A
-- schema before 0.9.0; ephemeral_lease_log_due.sql after.)
SELECT l.seq AS seq, 0::int4 AS ver, l.attempts AS attempts, l.lease_until = '-infinity' AS handed_back,
       m.payload::text AS payload
  FROM queen.ephemeral_leases l
  LEFT JOIN queen.ephemeral_messages m
    ON m.incarnation = l.incarnation AND m.partition = l.partition AND m.seq = l.seq
 WHERE l.incarnation = $1 AND l.partition = $2 AND l.grp = $3 AND l.seq >= $5
   AND l.lease_until <= clock_timestamp()
 ORDER BY l.seq
 LIMIT $4
