-- What a live ephemeral queue holds and dropped, as the caller counted it.
UPDATE queen.ephemeral_state
   SET depth = $2, bytes = $3, drops_bounds = $4, drops_ttl = $5, drops_retry = $6
 WHERE incarnation = $1
