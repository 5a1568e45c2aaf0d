-- State rows of query $1 in source partition $2 with keys $3, deleted.
DELETE FROM queen.stream_state
 WHERE query_id = $1 AND partition_id = $2 AND key = ANY ($3)
