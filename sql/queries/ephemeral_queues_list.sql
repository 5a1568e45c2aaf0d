-- Every ephemeral queue, declared or live, at most $1 by name, with its
-- newest tallies, partitions and groups.
SELECT coalesce(s.queue, q.queue) AS queue, q.options AS options, q.queue IS NOT NULL AS declared,
       coalesce(t.depth, 0)::bigint AS depth, coalesce(t.bytes, 0)::bigint AS bytes,
       coalesce(t.drops_bounds, 0)::bigint AS drops_bounds,
       coalesce(t.drops_ttl, 0)::bigint AS drops_ttl,
       coalesce(t.drops_retry, 0)::bigint AS drops_retry,
       (SELECT count(*) FROM queen.ephemeral_partitions p
         WHERE p.incarnation = s.incarnation)::bigint AS partitions,
       (SELECT count(*) FROM queen.ephemeral_groups g
         WHERE g.incarnation = s.incarnation)::bigint AS groups
  FROM queen.ephemeral_state s
  FULL JOIN queen.ephemeral_queues q ON q.queue = s.queue
  LEFT JOIN LATERAL (SELECT t.* FROM queen.ephemeral_tallies t
                      WHERE t.incarnation = s.incarnation ORDER BY t.ver DESC LIMIT 1) t ON true
 ORDER BY 1
 LIMIT $1
