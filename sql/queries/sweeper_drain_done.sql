-- Marks the schedules $1 (message ids) done, in the fire that pushes them:
-- answers the ones marked here. One marked by another fire first (its mark
-- committed, or committing while this waits on its key) is left out, and
-- this fire does not push it.
INSERT INTO queen.log_timers_done (message_id)
SELECT unnest($1::uuid[])
ON CONFLICT DO NOTHING
RETURNING message_id
