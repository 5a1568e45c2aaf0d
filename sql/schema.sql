-- queen: the tables of the message log.
--
-- Applied by CREATE EXTENSION queen (the extension's install script includes
-- this file before any function). Every object lives in schema queen. The
-- defaults of the queue options live in Rust (queen_ext/src/options.rs); the
-- columns here carry none, so there is one place that says what an omitted
-- option means.

-- The schema must be the installer's: objects another role placed in it
-- would run inside every call with the owner's rights.
DO $$
BEGIN
    IF (SELECT n.nspowner <> r.oid
          FROM pg_catalog.pg_namespace n, pg_catalog.pg_roles r
         WHERE n.nspname = 'queen' AND r.rolname = current_user) THEN
        RAISE EXCEPTION 'schema queen belongs to another role'
            USING ERRCODE = '42501',
                  HINT = 'queen is installed into a schema owned by the role that runs CREATE EXTENSION; drop or rename the existing schema first';
    END IF;
END
$$;

-- The maintenance steps, cycles and policy-free SQL helpers, apart from the
-- public API: only queen_admin may run them by hand (sql/privileges.sql).
CREATE SCHEMA queen_internal;

-- Queue identity: one row per queue, identity (tenant_id, name). Every
-- partition joins to its queue by id, never by name.
CREATE TABLE queen.queues (
    id                          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id                   uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    name                        text NOT NULL,
    namespace                   text,
    task                        text,
    priority                    integer NOT NULL,
    lease_time                  integer NOT NULL,   -- seconds
    retry_limit                 integer NOT NULL,
    retry_delay                 integer NOT NULL,   -- milliseconds
    dead_letter_queue           boolean NOT NULL,
    dlq_after_max_retries       boolean NOT NULL,
    delayed_processing          integer NOT NULL,   -- seconds
    window_buffer               integer NOT NULL,   -- seconds
    max_size                    integer NOT NULL,
    max_queue_size              integer NOT NULL,
    retention_enabled           boolean NOT NULL,
    retention_seconds           integer NOT NULL,
    completed_retention_seconds integer NOT NULL,
    max_wait_time_seconds       integer NOT NULL,
    dedup_window_seconds        integer NOT NULL,
    dlq_retention_seconds       integer NOT NULL,
    min_pop_wait_time           integer NOT NULL,   -- milliseconds
    encryption_enabled          boolean NOT NULL,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX queues_tenant_name_uk ON queen.queues (tenant_id, name);
CREATE INDEX idx_queues_namespace_task ON queen.queues (namespace, task);

-- One row per partition, and the per-partition write serializer: offsets are
-- assigned only under this row's lock.
--   last_offset     the highest assigned offset (-1 while nothing was pushed)
--   log_start       every offset below it is deleted; the first live segment's base
--   txns_start      the same watermark for the sidecar (log_txns)
--   oldest_live_at  created_at of the segment at log_start (NULL: no live segment)
--   oldest_txn_at   created_at of the sidecar row at txns_start (NULL: none)
--   last_write_at   created_at of the newest segment; also the monotone clock
--                   that keeps created_at non-decreasing in base_offset
CREATE TABLE queen.log_partitions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_id       bigint NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    name           text NOT NULL,
    last_offset    bigint NOT NULL DEFAULT -1,
    log_start      bigint NOT NULL DEFAULT 0,
    txns_start     bigint NOT NULL DEFAULT 0,
    oldest_live_at timestamptz,
    oldest_txn_at  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_write_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (queue_id, name)
) WITH (
    -- Every push rewrites this row: free space on the page keeps the new
    -- version on the same page.
    fillfactor = 70,
    -- A small, fixed population of very hot rows: vacuum on a dead-row count,
    -- not a fraction of a table that never grows, and never throttled.
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    -- Heap truncation takes ACCESS EXCLUSIVE, which would stall every push and
    -- pop while reclaiming next to nothing.
    vacuum_truncate = off
);
-- No index on last_write_at: every push moves it, and an indexed column that
-- changes makes every push a non-HOT update with an entry in each index. Pop
-- finds a queue's partitions through (queue_id, name).
-- The retention work list's due probes: one indexed range scan per queue and
-- phase; NULL (nothing live) keeps a partition out of them.
CREATE INDEX idx_log_partitions_oldest_live ON queen.log_partitions (queue_id, oldest_live_at)
    WHERE oldest_live_at IS NOT NULL;
CREATE INDEX idx_log_partitions_oldest_txn ON queen.log_partitions (queue_id, oldest_txn_at)
    WHERE oldest_txn_at IS NOT NULL;

-- The messages: frame_count frames per row, offsets base_offset..end_offset
-- (inclusive), stored as one zstd frame. The primary key is also the pop path.
CREATE TABLE queen.log_segments (
    partition_id bigint NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    base_offset  bigint NOT NULL,
    end_offset   bigint NOT NULL,
    frame_count  integer NOT NULL,
    created_at   timestamptz NOT NULL,
    blob         bytea NOT NULL,
    PRIMARY KEY (partition_id, base_offset),
    CHECK (end_offset = base_offset + frame_count - 1)
) WITH (
    -- Insert-mostly, deleted in whole ranges by retention: vacuum after a tenth
    -- dead, freeze/visibility work after 30% new rows, unthrottled so it keeps
    -- up with ranged deletes. The same on the TOAST table that holds the blobs.
    autovacuum_vacuum_scale_factor = 0.1,
    autovacuum_vacuum_insert_scale_factor = 0.3,
    autovacuum_vacuum_cost_limit = 4000,
    autovacuum_vacuum_cost_delay = 0,
    toast.autovacuum_vacuum_scale_factor = 0.1,
    toast.autovacuum_vacuum_insert_scale_factor = 0.3,
    toast.autovacuum_vacuum_cost_limit = 4000,
    toast.autovacuum_vacuum_cost_delay = 0
);
-- The blob is zstd already: compressing it again costs CPU and saves nothing.
ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTERNAL;

-- The hash sidecar: for each segment, the 64-bit hashes of its transaction ids
-- (txn_hashes[i] belongs to offset base_offset + i - 1). Written on every
-- push: ack resolves a transaction id to an offset through it. dedup_hashes
-- holds the hashes of the ids the caller supplied (NULL when the engine
-- minted them all: a minted id is unique by construction and never looked up
-- by value; NULL too where the queue keeps no dedup window, since nothing
-- checks against them); the push deduplication probe reads it. Deliberately
-- no foreign key: the two deleters of partitions (queue deletion and
-- empty-partition cleanup) delete these rows explicitly.
CREATE TABLE queen.log_txns (
    partition_id bigint NOT NULL,
    base_offset  bigint NOT NULL,
    created_at   timestamptz NOT NULL,
    txn_hashes   bigint[] NOT NULL,
    dedup_hashes bigint[],
    PRIMARY KEY (partition_id, base_offset)
) WITH (
    autovacuum_vacuum_scale_factor = 0.1,
    autovacuum_vacuum_insert_scale_factor = 0.3,
    autovacuum_vacuum_cost_delay = 0
);
-- Hashes are random bytes: compressing them only costs (pglz was 1.4% of a
-- push of 1000, whose 8 kB hash array it tried and failed to shrink). Arrays
-- over the TOAST threshold (pushes of ~250 items and more) go out of line as
-- they are.
ALTER TABLE queen.log_txns ALTER COLUMN txn_hashes SET STORAGE EXTERNAL,
                           ALTER COLUMN dedup_hashes SET STORAGE EXTERNAL;
-- The deduplication probe looks hashes up, and must cost in proportion to the
-- items pushed, not to the rows inside the dedup window. No pending list
-- (fastupdate off): every probe would scan the whole list, comparing each of
-- its entries with each hash looked up, so the insert the list saves is paid
-- back by every push that probes. Measured on a cluster holding ~140k sidecar
-- rows, pushes of 100 items carrying their own transaction ids, two
-- connections: 220-330 pushes/s per connection without the list, 110-150
-- with a 256 kB list and 110-120 with a 64 kB one.
CREATE INDEX idx_log_txns_dedup ON queen.log_txns USING gin (dedup_hashes)
    WITH (fastupdate = off)
    WHERE dedup_hashes IS NOT NULL;

-- Coordination per (partition, consumer group): the cursor, the lease and the
-- retry budget.
--   committed       every offset <= committed is done for this group
--   lease_*         the batch handed out: lease_start..lease_end, one byte of
--                   state per offset in lease_state (0 open, 1 done, 2 failed,
--                   3 retry)
--   head_offset     the offset whose deliveries head_attempts counts
CREATE TABLE queen.log_consumers (
    partition_id     bigint NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group   text NOT NULL,
    committed        bigint NOT NULL,
    lease_id         uuid,
    lease_expires_at timestamptz,
    lease_start      bigint,
    lease_end        bigint,
    lease_state      bytea,
    head_offset      bigint,
    head_attempts    integer NOT NULL DEFAULT 0,
    retry_at         timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
) WITH (
    -- Rewritten by every pop and ack. Half of each page is left free so a
    -- row's new version lands on its page (no free-space search; an ack that
    -- leaves the lease open is a HOT update). A pop that takes a lease and an
    -- ack that ends one change lease_id, which idx_log_consumers_lease
    -- covers: those updates are not HOT and add index entries, which the
    -- settings below have vacuum clear after every 500 dead rows.
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);
-- Lease renewal and multi-partition acks find their rows by lease id.
CREATE INDEX idx_log_consumers_lease ON queen.log_consumers (lease_id) WHERE lease_id IS NOT NULL;

-- A consumer group's subscription on a queue: where a new cursor starts.
CREATE TABLE queen.consumer_groups (
    queue_id          bigint NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group    text NOT NULL,
    subscription_mode text NOT NULL CHECK (subscription_mode IN ('all', 'new', 'timestamp')),
    subscription_from timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_id, consumer_group)
);

-- Dead-lettered messages. Written narrow: a pointer to the frame
-- (partition, offset, group) plus the failure; the payload is read from the
-- segment. The wide columns are filled only when the segment is about to be
-- reclaimed, so a failure never disappears with its segment. No foreign key:
-- queue deletion removes these rows explicitly.
-- The transaction id is kept from the start: it is how an operator names the
-- message (retry, delete) long after the sidecar forgot it.
CREATE TABLE queen.log_dlq (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_id       bigint NOT NULL,
    partition_id   bigint NOT NULL,
    consumer_group text NOT NULL,
    message_offset bigint NOT NULL,
    transaction_id text NOT NULL,
    error          text,
    attempts       integer NOT NULL,
    failed_at      timestamptz NOT NULL DEFAULT now(),
    -- wide columns: NULL while the row is narrow (created_at marks a wide row)
    message_id     uuid,
    trace_id       uuid,
    -- the frame's payload bytes as the push stored them (one JSON document),
    -- so a widened row answers byte for byte what its frame did
    payload        bytea,
    created_at     timestamptz,
    UNIQUE (partition_id, consumer_group, message_offset)
);
CREATE INDEX idx_log_dlq_partition_failed_at ON queen.log_dlq (partition_id, failed_at DESC);
-- DLQ retention's due probe and the by-queue readers.
CREATE INDEX idx_log_dlq_queue_failed_at ON queen.log_dlq (queue_id, failed_at);
CREATE INDEX idx_log_dlq_partition_txn ON queen.log_dlq (partition_id, transaction_id);

-- What DLQ retention removed, per queue: cumulative, never decreasing, and
-- written in the same transaction as the purge it counts.
CREATE TABLE queen.queue_terminal_rollups (
    queue_id            bigint PRIMARY KEY REFERENCES queen.queues (id) ON DELETE CASCADE,
    pruned_failed_count bigint NOT NULL DEFAULT 0,
    updated_at          timestamptz NOT NULL DEFAULT now()
);

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

-- Key/value state: (ns, key) rows with a JSON value and a mandatory expiry
-- ('infinity' when the writer declared forever). Versions come from one
-- sequence, so a key's version only rises, across deletes too: a lock's
-- fencing token is its row's version. Reads go through kv_live_v1, which
-- hides a row from the first read after its expiry instant; the sweepers
-- delete expired rows later (queen.kv_expire_every_ms), which only costs
-- table size, and count the expired-but-present rows on every pass.
CREATE SEQUENCE queen.kv_version_seq;
CREATE TABLE queen.kv (
    ns          text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    value       jsonb NOT NULL,
    version     bigint NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    shard       smallint GENERATED ALWAYS AS ((hashtextextended(ns || '/' || key, 0) & 63)::smallint) STORED,
    PRIMARY KEY (ns, key)
) WITH (
    -- Keys churn; truncation's ACCESS EXCLUSIVE would stall every read and
    -- write. The price: the heap never gives pages back, so an unpruned
    -- peak is permanent, which is why the prune counts what it leaves.
    vacuum_truncate = off,
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 0
);
-- The prune's and the expired count's 64 per-shard seeks. Keys that live
-- forever are not in it.
CREATE INDEX idx_kv_expiry ON queen.kv (shard, expires_at) WHERE expires_at < 'infinity';

CREATE VIEW queen.kv_live_v1 AS
SELECT ns, key, value, version,
       CASE WHEN expires_at = 'infinity' THEN NULL ELSE expires_at END AS expires_at,
       created_at, updated_at
  FROM queen.kv
 WHERE expires_at > statement_timestamp();

-- Per-namespace usage, written by the sweepers' rollup
-- (queen.kv_usage_every_ms); a gauge, not a ledger.
CREATE TABLE queen.kv_usage (
    ns              text COLLATE "C" PRIMARY KEY,
    keys            bigint NOT NULL,
    bytes           bigint NOT NULL,
    expired_present bigint NOT NULL DEFAULT 0,
    rolled_up_at    timestamptz NOT NULL
);

-- Per-namespace limits: a write that would take a namespace past either is
-- refused (SQLSTATE 53400). NULL: no limit of that kind.
CREATE TABLE queen.kv_quota (
    ns          text COLLATE "C" PRIMARY KEY,
    max_keys    bigint CHECK (max_keys >= 0),
    max_bytes   bigint CHECK (max_bytes >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
