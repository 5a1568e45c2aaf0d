-- Removes a partition's messages in [$3, $4) older than $5 seconds.
WITH gone AS (
    DELETE FROM queen.ephemeral_messages
     WHERE incarnation = $1 AND partition = $2 AND seq >= $3 AND seq < $4
       AND created_at < clock_timestamp() - $5 * interval '1 second'
    RETURNING bytes
)
SELECT count(*)::bigint AS n, coalesce(sum(bytes), 0)::bigint AS bytes FROM gone
