-- A live ephemeral queue's tallies, locked: every write to the queue holds
-- them. The newest version (n, the first visible entry of a backward
-- probe) is taken FOR UPDATE by its whole key; when another transaction
-- replaced it while this one waited for it, the lock finds it deleted and
-- the statement answers no row: the caller asks again, in a statement
-- whose snapshot sees the new one.
SELECT s.incarnation AS incarnation, t.ver AS ver, t.depth AS depth, t.bytes AS bytes,
       t.drops_bounds AS drops_bounds, t.drops_ttl AS drops_ttl, t.drops_retry AS drops_retry
  FROM queen.ephemeral_state s
 CROSS JOIN LATERAL (SELECT n.ver FROM queen.ephemeral_tallies n
                      WHERE n.incarnation = s.incarnation ORDER BY n.ver DESC LIMIT 1) n
 CROSS JOIN LATERAL (SELECT t.* FROM queen.ephemeral_tallies t
                      WHERE t.incarnation = s.incarnation AND t.ver = n.ver FOR UPDATE) t
 WHERE s.queue = $1
