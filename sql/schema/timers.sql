-- queen: timers.

-- Timers: a message delivered into queue/partition at or after deliver_at
-- (a floor, not an appointment). Scheduling upserts by (queue, timer_key),
-- and every schedule promises a new message id, which names that schedule
-- from then on. Firing writes new rows only: a sweeper claims due timers
-- (log_timer_claims) with SKIP LOCKED, then fires them into the log and
-- marks them done (log_timers_done); the retention cycle deletes done
-- timers with their claims and marks. The shard column spreads where
-- sweepers start scanning; it is fixed at 64 and never partitions
-- responsibility.
CREATE TABLE queen.log_timers (
    queue          text COLLATE "C" NOT NULL,
    timer_key      text COLLATE "C" NOT NULL,
    partition      text NOT NULL,
    payload        bytea NOT NULL,
    transaction_id text NOT NULL,
    -- promised at schedule time; the fired frame carries it
    message_id     uuid NOT NULL,
    deliver_at     timestamptz NOT NULL,
    shard          smallint GENERATED ALWAYS AS ((hashtextextended(queue || '/' || timer_key, 0) & 63)::smallint) STORED,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, timer_key)
) WITH (
    -- Rows come and go continuously; truncation's ACCESS EXCLUSIVE would
    -- stall every schedule and fire.
    vacuum_truncate = off,
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 0
);
-- The probe's single-row seeks and the claim's due scan, per shard.
CREATE INDEX idx_log_timers_due ON queen.log_timers (shard, deliver_at);
-- A schedule's claims and its mark find it by its message id.
CREATE UNIQUE INDEX idx_log_timers_message ON queen.log_timers (message_id);

-- The claims of a schedule (its message id), numbered from 1: a claim
-- holds the timer for its token until claimed_until; the newest claim is
-- the one a fire honours; error is the last failed fire under it. The
-- number of claims is the schedule's attempts.
CREATE TABLE queen.log_timer_claims (
    message_id    uuid NOT NULL,
    attempt       integer NOT NULL,
    token         uuid NOT NULL,
    claimed_until timestamptz NOT NULL,
    error         text,
    PRIMARY KEY (message_id, attempt)
) WITH (vacuum_truncate = off);

-- Schedules fired into the log: a row here means the timer row of that
-- message id is gone for every reader, and a second fire of it inserts
-- nothing (the key refuses it).
CREATE TABLE queen.log_timers_done (
    message_id uuid PRIMARY KEY,
    done_at    timestamptz NOT NULL DEFAULT now()
) WITH (vacuum_truncate = off);

-- Timers set aside: claimed queen.sweeper_max_fire_attempts times, each fire
-- failing (last_error says why). Never fired again; an operator reads them
-- here and reschedules or drops them. sweeper_metrics counts them.
CREATE TABLE queen.log_timers_failed (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue          text COLLATE "C" NOT NULL,
    timer_key      text COLLATE "C" NOT NULL,
    partition      text NOT NULL,
    payload        bytea NOT NULL,
    transaction_id text NOT NULL,
    message_id     uuid NOT NULL,
    deliver_at     timestamptz NOT NULL,
    attempts       integer NOT NULL,
    last_error     text NOT NULL,
    created_at     timestamptz NOT NULL,
    failed_at      timestamptz NOT NULL DEFAULT now()
);
