-- A queue's partitions by name, at most $2, each with its newest bounds.
SELECT p.partition AS partition, v.tail AS tail, v.head AS head, v.depth AS depth, v.bytes AS bytes
  FROM queen.ephemeral_partitions p
 CROSS JOIN LATERAL (SELECT v.tail, v.head, v.depth, v.bytes FROM queen.ephemeral_partition_states v
                      WHERE v.incarnation = p.incarnation AND v.partition = p.partition
                      ORDER BY v.ver DESC LIMIT 1) v
 WHERE p.incarnation = $1
 ORDER BY p.partition
 LIMIT $2
