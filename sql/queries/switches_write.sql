-- Pauses or resumes one surface.
INSERT INTO queen.system_state AS s (key, paused, updated_at)
VALUES ($1, $2, now())
ON CONFLICT (key) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at
