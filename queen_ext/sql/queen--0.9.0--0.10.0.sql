-- queen 0.9.0 -> 0.10.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.10.0 fires timers by writing new rows only: a claim is a row of
-- queen.log_timer_claims and a fire a row of queen.log_timers_done, where
-- the timer row itself was stamped and then deleted; the retention cycle
-- deletes done timers with their claims. A timer claimed when the update
-- runs keeps its claim (token, expiry and last error, under the same
-- attempt number); its earlier attempts become claims that have expired.
-- The update takes the timers table's lock for a moment; a schedule or a
-- fire waits for it. This file is frozen once shipped.

CREATE UNIQUE INDEX idx_log_timers_message ON queen.log_timers (message_id);

CREATE TABLE queen.log_timer_claims (
    message_id    uuid NOT NULL,
    attempt       integer NOT NULL,
    token         uuid NOT NULL,
    claimed_until timestamptz NOT NULL,
    error         text,
    PRIMARY KEY (message_id, attempt)
) WITH (vacuum_truncate = off);

CREATE TABLE queen.log_timers_done (
    message_id uuid PRIMARY KEY,
    done_at    timestamptz NOT NULL DEFAULT now()
) WITH (vacuum_truncate = off);

INSERT INTO queen.log_timer_claims (message_id, attempt, token, claimed_until, error)
SELECT t.message_id, a.n,
       CASE WHEN a.n = t.attempts AND t.claim_token IS NOT NULL THEN t.claim_token ELSE gen_random_uuid() END,
       CASE WHEN a.n = t.attempts AND t.claimed_until IS NOT NULL THEN t.claimed_until ELSE '-infinity' END,
       CASE WHEN a.n = t.attempts THEN t.last_error END
  FROM queen.log_timers t CROSS JOIN LATERAL generate_series(1, t.attempts) AS a(n);

ALTER TABLE queen.log_timers DROP COLUMN claim_token, DROP COLUMN claimed_until,
    DROP COLUMN attempts, DROP COLUMN last_error;

REVOKE ALL ON queen.log_timer_claims, queen.log_timers_done FROM PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('queen.log_timer_claims', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_timers_done', '');
