-- Forgets an ephemeral queue's declaration.
DELETE FROM queen.ephemeral_queues WHERE queue = $1 RETURNING queue AS queue
