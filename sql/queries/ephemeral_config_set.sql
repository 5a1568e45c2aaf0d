-- Declares an ephemeral queue, or replaces its options.
INSERT INTO queen.ephemeral_queues AS q (queue, options, updated_at)
VALUES ($1, $2, now())
ON CONFLICT (queue) DO UPDATE SET options = excluded.options, updated_at = excluded.updated_at
RETURNING q.options AS options, q.updated_at AS updated_at
