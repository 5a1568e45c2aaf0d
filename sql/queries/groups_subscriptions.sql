SELECT g.consumer_group, q.name AS queue, g.subscription_mode,
       (extract(epoch FROM g.subscription_from) * 1000000)::int8 AS from_us,
       (extract(epoch FROM g.created_at) * 1000000)::int8 AS created_us,
       -- Read through the row's JSON: a schema before 0.11.0 has no such
       -- column, and its groups do not conflate.
       COALESCE((to_jsonb(g) ->> 'conflation')::boolean, false) AS conflation
  FROM queen.consumer_groups g
  JOIN queen.queues q ON q.id = g.queue_id
 WHERE ($1::text IS NULL OR g.consumer_group = $1)
 ORDER BY g.consumer_group, q.name
 LIMIT $2
