-- A live ephemeral queue, locked: every write to the queue holds its
-- state row (written once, never replaced), so its tallies, its partitions'
-- bounds, its cursors and its leases have one writer at a time. The lock
-- marks the row; it makes no new version. The caller reads the newest
-- tallies in a statement of its own, whose snapshot is taken once the lock
-- is granted (ephemeral_tallies_get.sql). No row: the queue is not live
-- (a reset or a delete that held the lock first removed it).
SELECT s.incarnation AS incarnation
  FROM queen.ephemeral_state s
 WHERE s.queue = $1
   FOR UPDATE
