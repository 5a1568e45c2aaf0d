-- A live queue's partitions by name, at most $3 of them, going round the
-- queue: first those past $2 (the last one a pop of this backend visited;
-- NULL: none), then from the first name up to $2. So a queue-wide pop that
-- visits at most queen.ephemeral_pop_max_partitions of them starts where the
-- one before stopped, and every partition has its turn.
(SELECT partition AS partition, tail AS tail, head AS head, depth AS depth, bytes AS bytes
   FROM queen.ephemeral_partitions
  WHERE incarnation = $1 AND partition > COALESCE($2, '')
  ORDER BY partition
  LIMIT $3)
UNION ALL
(SELECT partition, tail, head, depth, bytes
   FROM queen.ephemeral_partitions
  WHERE incarnation = $1 AND $2 IS NOT NULL AND partition <= $2
  ORDER BY partition
  LIMIT $3)
LIMIT $3
