-- The lease of a group on a message, when it holds one: its newest
-- version, unless that settled it or the message lies below its
-- partition's tail (dropped).
SELECT l.ver AS ver, l.attempts AS attempts
  FROM (SELECT l.ver, l.attempts, l.lease_until FROM queen.ephemeral_leases l
         WHERE l.incarnation = $1 AND l.partition = $2 AND l.grp = $3 AND l.seq = $4
         ORDER BY l.ver DESC
         LIMIT 1) l
 WHERE l.lease_until <> 'infinity'
   AND $4 >= (SELECT v.tail FROM queen.ephemeral_partition_states v
               WHERE v.incarnation = $1 AND v.partition = $2
               ORDER BY v.ver DESC LIMIT 1)
