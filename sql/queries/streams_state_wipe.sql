-- Every state row of query $1, deleted; how many.
WITH gone AS (DELETE FROM queen.stream_state WHERE query_id = $1 RETURNING 1)
SELECT count(*) AS deleted FROM gone
