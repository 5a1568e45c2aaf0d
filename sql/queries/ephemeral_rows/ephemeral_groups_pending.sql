-- A live queue's groups, by name, at most $2, with what each has not yet
-- been handed and what was removed before it read it.
SELECT g.grp AS grp,
       coalesce(sum(p.head - GREATEST(coalesce(c.next_seq, p.tail), p.tail)), 0)::bigint AS pending,
       coalesce(sum(c.skipped), 0)::bigint AS skipped
  FROM queen.ephemeral_groups g
  LEFT JOIN queen.ephemeral_partitions p ON p.incarnation = g.incarnation
  LEFT JOIN queen.ephemeral_cursors c
    ON c.incarnation = g.incarnation AND c.partition = p.partition AND c.grp = g.grp
 WHERE g.incarnation = $1
 GROUP BY g.grp
 ORDER BY g.grp
 LIMIT $2
