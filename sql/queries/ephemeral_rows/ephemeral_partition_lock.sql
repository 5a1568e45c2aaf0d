-- One partition of a live queue, locked.
SELECT 0::bigint AS ver, tail AS tail, head AS head, depth AS depth, bytes AS bytes
  FROM queen.ephemeral_partitions
 WHERE incarnation = $1 AND partition = $2
   FOR UPDATE
