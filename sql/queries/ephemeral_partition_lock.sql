-- A partition's bounds, locked: every write to the partition holds them.
-- The newest version is taken FOR UPDATE by its whole key, as
-- ephemeral_state_lock.sql takes a queue's tallies (no row when another
-- transaction replaced it meanwhile, or there is no such partition).
SELECT v.ver AS ver, v.tail AS tail, v.head AS head, v.depth AS depth, v.bytes AS bytes
  FROM (SELECT n.ver FROM queen.ephemeral_partition_states n
         WHERE n.incarnation = $1 AND n.partition = $2 ORDER BY n.ver DESC LIMIT 1) n
 CROSS JOIN LATERAL (SELECT v.* FROM queen.ephemeral_partition_states v
                      WHERE v.incarnation = $1 AND v.partition = $2 AND v.ver = n.ver FOR UPDATE) v
