-- A live queue's partitions, by name, at most $2 of them.
SELECT partition AS partition, tail AS tail, head AS head, depth AS depth, bytes AS bytes
  FROM queen.ephemeral_partitions
 WHERE incarnation = $1
 ORDER BY partition
 LIMIT $2
