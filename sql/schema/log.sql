-- queen: the log: partitions, their segments and the hash sidecar.

-- One row per partition, and the per-partition write serializer: offsets are
-- assigned only under this row's lock (FOR NO KEY UPDATE). A push locks the
-- row and appends; it does not update it, so a snapshot held open anywhere
-- in the database (a pg_dump, a long query) leaves no chain of versions
-- here for every later push to walk (docs/architecture.md, "MVCC").
-- The partition's last offset is not stored: it is the newest segment's
-- end_offset (one backward probe of the segments' primary key), or
-- log_start - 1 when retention has deleted every segment.
--   log_start       every offset below it is deleted; the first live segment's base
--   txns_start      the same watermark for the sidecar (log_txns)
--   oldest_live_at  created_at of the segment at log_start (NULL: no live segment);
--                   set by the push that finds it NULL, and by retention
--   oldest_txn_at   created_at of the sidecar row at txns_start (NULL: none)
--   last_write_at   the newest created_at of a segment retention has deleted
--                   (or the row's creation): the partition's last write is
--                   GREATEST(last_write_at, the newest segment's created_at),
--                   the monotone clock that keeps created_at non-decreasing
--                   in base_offset
CREATE TABLE queen.log_partitions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_id       bigint NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    name           text NOT NULL,
    log_start      bigint NOT NULL DEFAULT 0,
    txns_start     bigint NOT NULL DEFAULT 0,
    oldest_live_at timestamptz,
    oldest_txn_at  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_write_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (queue_id, name)
) WITH (
    -- Retention steps rewrite this row: free space on the page keeps the
    -- new version on the same page.
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
-- No index on last_write_at: the partition's last write is derived from its
-- newest segment. Pop finds a queue's partitions through (queue_id, name).
-- The retention work list's due probes: one indexed range scan per queue and
-- phase; NULL (nothing live) keeps a partition out of them.
CREATE INDEX idx_log_partitions_oldest_live ON queen.log_partitions (queue_id, oldest_live_at)
    WHERE oldest_live_at IS NOT NULL;
CREATE INDEX idx_log_partitions_oldest_txn ON queen.log_partitions (queue_id, oldest_txn_at)
    WHERE oldest_txn_at IS NOT NULL;

-- The messages: frame_count frames per row, offsets base_offset..end_offset
-- (inclusive), stored as one zstd frame. The primary key is also the pop path.
-- No foreign key: a segment is written only by a push holding its
-- partition's row lock. Queue deletion takes those locks and deletes the
-- segments explicitly; the empty-partition cleanup takes only partitions
-- with no segment left, checked under the same locks. A key checked on
-- every insert was a tenth of a fused push's time in the database.
CREATE TABLE queen.log_segments (
    partition_id bigint NOT NULL,
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
