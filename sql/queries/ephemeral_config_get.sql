-- A declared ephemeral queue's options as configured.
SELECT options AS options, updated_at AS updated_at
  FROM queen.ephemeral_queues
 WHERE queue = $1
