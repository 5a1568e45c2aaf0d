-- A partition's bounds: the newest version (no row: the queue has no such
-- partition). Read under the queue's lock, which every writer of the
-- partition holds.
SELECT v.ver AS ver, v.tail AS tail, v.head AS head, v.depth AS depth, v.bytes AS bytes
  FROM queen.ephemeral_partition_states v
 WHERE v.incarnation = $1 AND v.partition = $2
 ORDER BY v.ver DESC
 LIMIT 1
