-- A live queue's tallies: the newest version (the first entry of a
-- backward probe of the incarnation; the versions below it wait for the
-- retention cycle's compaction).
SELECT $1::int8 AS incarnation, t.ver AS ver, t.depth AS depth, t.bytes AS bytes,
       t.drops_bounds AS drops_bounds, t.drops_ttl AS drops_ttl, t.drops_retry AS drops_retry
  FROM queen.ephemeral_tallies t
 WHERE t.incarnation = $1
 ORDER BY t.ver DESC
 LIMIT 1
