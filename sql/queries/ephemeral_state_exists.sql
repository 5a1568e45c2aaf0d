-- Whether the queue $1 is live.
SELECT 1 AS live FROM queen.ephemeral_state WHERE queue = $1
