-- How many groups the queue has, how many have a cursor in the partition,
-- and the lowest sequence number any of those still needs (its cursor, or
-- its oldest lease not settled; the leases below the tail $3 are gone).
-- A lease's newest version is found by a subquery on its whole key (as a
-- join, a plan made without statistics read the group's every lease for
-- each one), and the first such lease by reading the key in order.
SELECT (SELECT count(*) FROM queen.ephemeral_groups g WHERE g.incarnation = $1)::bigint AS groups,
       count(*)::bigint AS cursors,
       min(LEAST(c.next_seq, coalesce((
           SELECT l.seq FROM queen.ephemeral_leases l
            WHERE l.incarnation = $1 AND l.partition = $2 AND l.grp = g.grp
              AND l.seq >= $3 AND l.lease_until <> 'infinity'
              AND l.ver = (SELECT max(n.ver) FROM queen.ephemeral_leases n
                            WHERE n.incarnation = $1 AND n.partition = $2 AND n.grp = g.grp
                              AND n.seq = l.seq)
            ORDER BY l.seq
            LIMIT 1), c.next_seq))) AS watermark
  FROM queen.ephemeral_groups g
 CROSS JOIN LATERAL (SELECT c.next_seq FROM queen.ephemeral_cursors c
                      WHERE c.incarnation = $1 AND c.partition = $2 AND c.grp = g.grp
                      ORDER BY c.ver DESC LIMIT 1) c
 WHERE g.incarnation = $1
