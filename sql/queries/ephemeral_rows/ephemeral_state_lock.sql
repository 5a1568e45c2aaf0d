-- A live ephemeral queue's row, locked: every write to the queue holds it.
SELECT incarnation AS incarnation, 0::bigint AS ver, depth AS depth, bytes AS bytes,
       drops_bounds AS drops_bounds, drops_ttl AS drops_ttl, drops_retry AS drops_retry
  FROM queen.ephemeral_state
 WHERE queue = $1
   FOR UPDATE
