-- How many queues of tenant $1 match $2 name, $3 namespace and $4 task
-- (NULL: any), as queues_list.sql matches them.
SELECT count(*)::int8 AS matched
  FROM queen.queues
 WHERE tenant_id = $1 AND ($2::text IS NULL OR name = $2)
   AND ($3::text IS NULL OR namespace = $3) AND ($4::text IS NULL OR task = $4)
