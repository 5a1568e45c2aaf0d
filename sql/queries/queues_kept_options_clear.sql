-- Puts the kept options of one queue back to their defaults.
DELETE FROM queen.queue_kept_options WHERE queue_id = $1
