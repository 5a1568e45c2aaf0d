-- Ends a queue's incarnation (the caller holds its tallies locked): its
-- row goes, the incarnation is listed for the cleanup steps, and the
-- messages it held are answered.
WITH gone AS (
    DELETE FROM queen.ephemeral_state WHERE queue = $1 RETURNING incarnation
), retired AS (
    INSERT INTO queen.ephemeral_retired (incarnation) SELECT incarnation FROM gone
)
SELECT g.incarnation AS incarnation,
       COALESCE((SELECT t.depth FROM queen.ephemeral_tallies t
                  WHERE t.incarnation = g.incarnation ORDER BY t.ver DESC LIMIT 1), 0)::bigint AS depth
  FROM gone g
