-- Every ephemeral queue, declared or live, by name, at most $1.
SELECT coalesce(s.queue, q.queue) AS queue, q.options AS options, q.queue IS NOT NULL AS declared,
       coalesce(s.depth, 0)::bigint AS depth, coalesce(s.bytes, 0)::bigint AS bytes,
       coalesce(s.drops_bounds, 0)::bigint AS drops_bounds,
       coalesce(s.drops_ttl, 0)::bigint AS drops_ttl,
       coalesce(s.drops_retry, 0)::bigint AS drops_retry,
       (SELECT count(*) FROM queen.ephemeral_partitions p
         WHERE p.incarnation = s.incarnation)::bigint AS partitions,
       (SELECT count(*) FROM queen.ephemeral_groups g
         WHERE g.incarnation = s.incarnation)::bigint AS groups
  FROM queen.ephemeral_state s
  FULL JOIN queen.ephemeral_queues q ON q.queue = s.queue
 ORDER BY 1
 LIMIT $1
