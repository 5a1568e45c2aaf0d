-- A live ephemeral queue's newest tallies, unlocked (for the reads).
SELECT s.incarnation AS incarnation, t.ver AS ver, t.depth AS depth, t.bytes AS bytes,
       t.drops_bounds AS drops_bounds, t.drops_ttl AS drops_ttl, t.drops_retry AS drops_retry
  FROM queen.ephemeral_state s
 CROSS JOIN LATERAL (SELECT t.* FROM queen.ephemeral_tallies t
                      WHERE t.incarnation = s.incarnation ORDER BY t.ver DESC LIMIT 1) t
 WHERE s.queue = $1
