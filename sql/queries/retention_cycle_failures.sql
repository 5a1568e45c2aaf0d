WITH counted AS (UPDATE queen.retention_failures SET skip = skip - 1 WHERE skip > 0 RETURNING 1)
SELECT partition_id, phase, skip > 0 AS skipped FROM queen.retention_failures
