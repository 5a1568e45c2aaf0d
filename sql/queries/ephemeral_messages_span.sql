-- How many messages a partition stores with sequence numbers in [$3, $4),
-- and their bytes: what moving its tail from $3 to $4 takes out of the
-- tallies. The rows stay below the tail, read by nothing, until the
-- retention cycle's compaction deletes them.
SELECT count(*)::bigint AS n, coalesce(sum(bytes), 0)::bigint AS bytes
  FROM queen.ephemeral_messages
 WHERE incarnation = $1 AND partition = $2 AND seq >= $3 AND seq < $4
