-- Makes an ephemeral queue live with a new incarnation (never drawn before).
INSERT INTO queen.ephemeral_state (queue, incarnation)
VALUES ($1, nextval('queen.ephemeral_incarnation_seq'))
ON CONFLICT (queue) DO NOTHING
