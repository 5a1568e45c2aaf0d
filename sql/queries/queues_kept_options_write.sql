-- Stores the kept options of one queue, as a whole.
INSERT INTO queen.queue_kept_options (queue_id, options) VALUES ($1, $2)
    ON CONFLICT (queue_id) DO UPDATE SET options = EXCLUDED.options, updated_at = now()
