-- Traces recorded before the cutoff, oldest first, at most a limit of them
-- (their names go with them: the foreign key cascades).
WITH gone AS (
    DELETE FROM queen.message_traces WHERE id IN (
        SELECT id FROM queen.message_traces WHERE created_at < $1
         ORDER BY created_at LIMIT $2)
    RETURNING 1)
SELECT count(*)::int8 AS deleted FROM gone
