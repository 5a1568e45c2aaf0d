-- Deletes the dead letters of (partition, transaction id); answers how many.
WITH gone AS (
    DELETE FROM queen.log_dlq WHERE partition_id = $1 AND transaction_id = $2 RETURNING 1)
SELECT count(*)::int8 AS deleted FROM gone
