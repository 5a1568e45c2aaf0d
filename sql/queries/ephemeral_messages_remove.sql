-- Removes a partition's messages with sequence numbers in [$3, $4).
WITH gone AS (
    DELETE FROM queen.ephemeral_messages
     WHERE incarnation = $1 AND partition = $2 AND seq >= $3 AND seq < $4
    RETURNING bytes
)
SELECT count(*)::bigint AS n, coalesce(sum(bytes), 0)::bigint AS bytes FROM gone
