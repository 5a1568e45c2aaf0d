-- The query named $1 and (by cascade) its state, deleted; how many state
-- rows went with it. No row when there is no such query.
WITH q AS (DELETE FROM queen.stream_queries WHERE name = $1 RETURNING id),
     n AS (SELECT count(*) AS rows FROM queen.stream_state WHERE query_id IN (SELECT id FROM q))
SELECT q.id, n.rows FROM q, n
