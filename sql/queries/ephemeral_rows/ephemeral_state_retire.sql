-- Ends a queue's incarnation: its rows are left for the cleanup steps.
WITH gone AS (
    DELETE FROM queen.ephemeral_state WHERE queue = $1 RETURNING incarnation, depth
), retired AS (
    INSERT INTO queen.ephemeral_retired (incarnation) SELECT incarnation FROM gone
)
SELECT incarnation AS incarnation, depth AS depth FROM gone
