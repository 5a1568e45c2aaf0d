-- Whether group $2 of queue $1 conflates; no row when it is not registered.
-- Read through the row's JSON: a schema before 0.11.0 has no such column,
-- and its groups do not conflate.
SELECT COALESCE((to_jsonb(g) ->> 'conflation')::boolean, false) AS conflation
  FROM queen.consumer_groups g
 WHERE g.queue_id = $1 AND g.consumer_group = $2
