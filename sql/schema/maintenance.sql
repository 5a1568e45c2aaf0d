-- queen: maintenance: retention history, the leased schedule of the
-- maintenance tasks, and the cycles' work tables.

-- One audit row per deleting retention step (committed if and only if its
-- delete was), and one '__partition_deleted__' row per reclaimed partition.
-- No foreign key: the row must outlive the partition it describes.
CREATE TABLE queen.retention_history (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partition_id     bigint NOT NULL,
    retention_type   text NOT NULL,
    messages_deleted bigint NOT NULL,
    segments_deleted bigint NOT NULL DEFAULT 0,
    executed_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_retention_history_executed_at ON queen.retention_history (executed_at DESC);

-- Durable per-task schedule and leader gate of the maintenance cycles: one
-- atomic UPDATE claims a task when it is due, not leased and enabled.
CREATE TABLE queen.maintenance_leases (
    task             text PRIMARY KEY,
    enabled          boolean NOT NULL DEFAULT true,
    next_due_at      timestamptz NOT NULL DEFAULT now(),
    lease_holder     text,
    lease_expires_at timestamptz,
    fencing_token    bigint NOT NULL DEFAULT 0,
    last_started_at  timestamptz,
    last_finished_at timestamptz,
    last_error       text
);
INSERT INTO queen.maintenance_leases (task) VALUES ('retention'), ('retention_watermark'), ('partition_cleanup');

-- Retention's working state between cycles and between the processes of one
-- cycle. Unlogged: losing it in a crash costs one cycle's backoff, nothing
-- else, and it never needs to reach a standby.

-- Phase-1 partitions that were due by age and deleted nothing (cursor
-- capped): skipped for a doubling number of cycles.
CREATE UNLOGGED TABLE queen.retention_backoff (
    partition_id bigint PRIMARY KEY,
    skip         integer NOT NULL,
    streak       integer NOT NULL
);

-- The shared cursor of a parallel cycle: its due partitions, pulled one at a
-- time by the step workers with SKIP LOCKED.
CREATE UNLOGGED TABLE queen.retention_work (
    token            bigint NOT NULL,
    seq              integer NOT NULL,
    phase            smallint NOT NULL,
    partition_id     bigint NOT NULL,
    all_cutoff       timestamptz,
    completed_cutoff timestamptz,
    cutoff           timestamptz,
    failing          boolean NOT NULL DEFAULT false,
    PRIMARY KEY (token, seq)
);

-- What each step worker of a parallel cycle did.
CREATE UNLOGGED TABLE queen.retention_work_done (
    token    bigint NOT NULL,
    worker   integer NOT NULL,
    segments bigint NOT NULL,
    messages bigint NOT NULL,
    txns     bigint NOT NULL,
    evicted  bigint NOT NULL,
    error    text,
    -- items whose step failed (the cycle went on), the first few named
    failed   integer NOT NULL DEFAULT 0,
    failing  text[],
    PRIMARY KEY (token, worker)
);

-- Units of work whose step failed: a partition's phase (1 to 3), or a
-- queue's DLQ purge (phase 4, keyed by the queue id). Skipped for a
-- doubling number of cycles, like a fruitless partition, with the error
-- they failed with (retention_explain shows it); an entry goes when its unit
-- succeeds or is no longer due.
CREATE UNLOGGED TABLE queen.retention_failures (
    partition_id bigint NOT NULL,
    phase        smallint NOT NULL,
    skip         integer NOT NULL,
    streak       integer NOT NULL,
    sqlstate     text NOT NULL,
    error        text NOT NULL,
    failed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, phase)
);
