-- The kept options of one queue (no row: all at their defaults).
SELECT options FROM queen.queue_kept_options WHERE queue_id = $1
