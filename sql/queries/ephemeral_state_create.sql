-- Makes a queue live: a new incarnation and its first tallies (none if
-- another transaction made it live first).
WITH s AS (
    INSERT INTO queen.ephemeral_state (queue, incarnation)
    VALUES ($1, nextval('queen.ephemeral_incarnation_seq'))
    ON CONFLICT (queue) DO NOTHING
    RETURNING incarnation
)
INSERT INTO queen.ephemeral_tallies (incarnation, ver)
SELECT incarnation, 0 FROM s
