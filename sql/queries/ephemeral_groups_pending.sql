-- A queue's groups, at most $2 by name: what each has not been handed yet
-- over the partitions, and how many messages were removed before it read
-- them.
SELECT g.grp AS grp,
       coalesce(sum(v.head - GREATEST(coalesce(c.next_seq, v.tail), v.tail)), 0)::bigint AS pending,
       coalesce(sum(c.skipped), 0)::bigint AS skipped
  FROM queen.ephemeral_groups g
  LEFT JOIN queen.ephemeral_partitions p ON p.incarnation = g.incarnation
  LEFT JOIN LATERAL (SELECT v.tail, v.head FROM queen.ephemeral_partition_states v
                      WHERE v.incarnation = p.incarnation AND v.partition = p.partition
                      ORDER BY v.ver DESC LIMIT 1) v ON true
  LEFT JOIN LATERAL (SELECT c.next_seq, c.skipped FROM queen.ephemeral_cursors c
                      WHERE c.incarnation = p.incarnation AND c.partition = p.partition
                        AND c.grp = g.grp
                      ORDER BY c.ver DESC LIMIT 1) c ON true
 WHERE g.incarnation = $1
 GROUP BY g.grp
 ORDER BY g.grp
 LIMIT $2
