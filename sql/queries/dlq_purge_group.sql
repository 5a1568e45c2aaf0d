WITH gone AS (
    DELETE FROM queen.log_dlq WHERE id IN (
        SELECT id FROM queen.log_dlq WHERE queue_id = $1 AND ($2::text IS NULL OR consumer_group = $2)
         ORDER BY failed_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
    RETURNING 1
), n AS (SELECT count(*)::int8 AS n FROM gone),
counted AS (
    INSERT INTO queen.queue_terminal_rollups AS r (queue_id, pruned_failed_count)
    SELECT $1, n FROM n WHERE n > 0
    ON CONFLICT (queue_id) DO UPDATE
       SET pruned_failed_count = r.pruned_failed_count + EXCLUDED.pruned_failed_count, updated_at = now()
    RETURNING 1)
SELECT n FROM n
