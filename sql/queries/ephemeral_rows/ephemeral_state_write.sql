-- What a live ephemeral queue holds and dropped, as the caller counted it.
-- ($7, the version a schema of versions holds, is not used here.)
UPDATE queen.ephemeral_state
   SET depth = $2, bytes = $3, drops_bounds = $4, drops_ttl = $5, drops_retry = $6
 WHERE incarnation = $1
