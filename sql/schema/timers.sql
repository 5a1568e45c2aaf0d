-- queen: timers.

-- Timers: a message delivered into queue/partition at or after deliver_at
-- (a floor, not an appointment). Scheduling upserts by (queue, timer_key);
-- the sweeper claims due rows with SKIP LOCKED, fires them into the log and
-- deletes them. The shard column spreads where sweepers start scanning; it
-- is fixed at 64 and never partitions responsibility.
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
    claim_token    uuid,
    claimed_until  timestamptz,
    attempts       integer NOT NULL DEFAULT 0,
    last_error     text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, timer_key)
) WITH (
    -- Rows come and go continuously; truncation's ACCESS EXCLUSIVE would
    -- stall every schedule and fire.
    vacuum_truncate = off,
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 0
);
-- The probe's 64 single-row seeks and the claim's due scan.
CREATE INDEX idx_log_timers_due ON queen.log_timers (shard, deliver_at);

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
