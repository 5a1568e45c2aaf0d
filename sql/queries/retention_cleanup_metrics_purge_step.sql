WITH gone AS (
    DELETE FROM queen.retention_history WHERE id IN (
        SELECT id FROM queen.retention_history WHERE executed_at < $1
         ORDER BY executed_at LIMIT $2)
    RETURNING 1)
SELECT count(*)::int8 AS deleted FROM gone
