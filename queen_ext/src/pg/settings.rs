//! Settings: every GUC of the extension, under the `queen.` prefix with the
//! unit in the name. Each is written once (its static, its definition in
//! the `register_*` function of its concern) and read by the rest of the
//! extension through one typed accessor.
//!
//! Unless its definition says otherwise a setting is `Suset`: the workers
//! read it from postgresql.conf (again on SIGHUP), and a superuser session
//! that drives a cycle from SQL may set it for itself.

use std::ffi::CString;
use std::time::Duration;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

/// Sweeper workers that can be woken (the bound of queen.sweeper_workers).
pub const MAX_SWEEPERS: usize = 16;

/// Defines every setting; called once, from `_PG_init`.
pub fn register() {
    register_workers();
    register_limits();
    register_commits();
    register_retention();
    register_sweeper();
    register_kv();
    register_reads();
    register_messages();
    register_ephemeral();
    register_memory();
}

/// `queen.malloc_keep_bytes`: freed memory a backend keeps for its next
/// calls instead of giving its heap back after each (default 8 MB;
/// `queen_datum::memory`).
static MALLOC_KEEP_BYTES: GucSetting<i32> =
    GucSetting::<i32>::new(queen_datum::memory::DEFAULT_KEEP_BYTES);

fn register_memory() {
    queen_datum::memory::define(c"queen.malloc_keep_bytes", &MALLOC_KEEP_BYTES);
}

// The background workers.

/// `queen.database_name`: the database the background workers connect to
/// (default `postgres`; read at server start only).
static DATABASE_NAME: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));
/// `queen.workers_enabled`: whether the background workers do any work
/// (default on); they still need shared_preload_libraries.
static WORKERS_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `queen.maintenance_lease_ms`: how long a claimed maintenance lease lasts,
/// in milliseconds (default 60 s, at least 1 s); a dead holder stalls its
/// task at most this long.
static MAINTENANCE_LEASE_MS: GucSetting<i32> = GucSetting::<i32>::new(60_000);

fn register_workers() {
    GucRegistry::define_string_guc(
        c"queen.database_name",
        c"Database the queen background workers connect to.",
        c"The workers wait quietly until the extension is created there.",
        &DATABASE_NAME,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.workers_enabled",
        c"Whether the maintenance background workers do any work.",
        c"Everything they do can also be driven from SQL.",
        &WORKERS_ENABLED,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.maintenance_lease_ms",
        c"Lease of a claimed maintenance task, in milliseconds.",
        c"",
        &MAINTENANCE_LEASE_MS,
        1000,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The database the workers connect to (`queen.database_name`; `postgres`
/// when it is unset).
pub fn database_name() -> String {
    DATABASE_NAME
        .get()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|| "postgres".into())
}

/// Whether the background workers do their work (`queen.workers_enabled`).
pub fn workers_enabled() -> bool {
    WORKERS_ENABLED.get()
}

/// A maintenance lease, in milliseconds (`queen.maintenance_lease_ms`).
pub fn maintenance_lease_ms() -> i64 {
    MAINTENANCE_LEASE_MS.get() as i64
}

// The bounds of one call.

/// `queen.push_max_items`: most items one push call takes (default 10 000,
/// 1 to 1 000 000).
static PUSH_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.pop_max_batch`: largest `batch` one pop may ask for (default
/// 10 000, 1 to 1 000 000).
static POP_MAX_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.pop_max_partitions`: most partitions one pop may claim (default
/// 100, 1 to 10 000).
static POP_MAX_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(100);
/// `queen.pop_candidates`: most candidate partitions one pop examines per
/// partition it may claim (default 16, 1 to 10 000).
static POP_CANDIDATES: GucSetting<i32> = GucSetting::<i32>::new(16);
/// `queen.pop_scan_window`: most partitions of a queue a pop's candidate
/// window reads before the pop looks at all of them (default 256, 16 to
/// 1 000 000; never below the candidates the pop looks for).
static POP_SCAN_WINDOW: GucSetting<i32> = GucSetting::<i32>::new(256);
/// `queen.pop_memo_ms`: how long a backend passes by the partitions of a
/// queue it found done for a consumer group, before it reads the queue
/// again (default 30 000, 0 to 3 600 000; 0: never).
static POP_MEMO_MS: GucSetting<i32> = GucSetting::<i32>::new(30_000);
/// `queen.pop_memo_partitions`: most partitions a backend keeps found done,
/// over its queues and groups (default 65 536, 0 to 10 000 000).
static POP_MEMO_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(65_536);
/// `queen.pop_autopilot_batch`: the batch of an autopilot pop that names
/// none (default 100, 1 to 1 000 000; never above `queen.pop_max_batch`).
static POP_AUTOPILOT_BATCH: GucSetting<i32> = GucSetting::<i32>::new(100);
/// `queen.pop_autopilot_partitions`: most partitions an autopilot pop that
/// names no width claims (default 8, 1 to 10 000; never above
/// `queen.pop_max_partitions`).
static POP_AUTOPILOT_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(8);
/// `queen.ack_max_items`: most acknowledgements one ack call takes (default
/// 10 000, 1 to 1 000 000).
static ACK_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.ack_lookback_segments`: sidecar rows an ack of an id outside any
/// lease looks back over (default 64, 0 to 100 000).
static ACK_LOOKBACK_SEGMENTS: GucSetting<i32> = GucSetting::<i32>::new(64);
/// `queen.stream_max_rows`: most state rows one streaming call reads or
/// writes (default 100 000, 1 to 10 000 000).
static STREAM_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(100_000);
/// `queen.stream_flush_quiet_ms`: how long after a streaming state row was
/// written a cycle without an ack (an idle flush) that touches it is put
/// off (default 1000, 0 to 60 000).
static STREAM_FLUSH_QUIET_MS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.decompress_max_bytes`: bytes one request may decompress to, over
/// all its compressed parts (default 16 MiB, at least 1 KiB).
static DECOMPRESS_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(16 * 1024 * 1024);
/// `queen.fused_max_requests`: most requests one fused call (`push_fused`,
/// `ack_fused`, `renew_fused`) takes (default 1 000, 1 to 100 000).
static FUSED_MAX_REQUESTS: GucSetting<i32> = GucSetting::<i32>::new(1_000);

/// `queen.segment_max_bytes`: bytes of frames (uncompressed) one segment a
/// push writes holds at most (default 64 MiB, 64 KiB to 128 MiB: half of
/// what a reader opens, `MAX_SEGMENT_RAW_BYTES`).
static SEGMENT_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(64 * 1024 * 1024);

/// `queen.push_known_partitions`: partition ids a backend remembers for its
/// next pushes (default 10 000, 0 to 1 000 000; 0: none).
static PUSH_KNOWN_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(10_000);

fn register_limits() {
    GucRegistry::define_int_guc(
        c"queen.segment_max_bytes",
        c"Bytes of messages (uncompressed) one segment holds at most.",
        c"A push, fused or not, writes more to one partition as several segments.",
        &SEGMENT_MAX_BYTES,
        64 * 1024,
        (queen_frames::MAX_SEGMENT_RAW_BYTES / 2) as i32,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.push_known_partitions",
        c"Partition ids a backend remembers for its next pushes.",
        c"A push over partitions it knows locks them by id without resolving their names; 0 remembers none.",
        &PUSH_KNOWN_PARTITIONS,
        0,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.fused_max_requests",
        c"Most requests one fused call takes.",
        c"Each request keeps its own bounds (queen.push_max_items, queen.ack_max_items).",
        &FUSED_MAX_REQUESTS,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.push_max_items",
        c"Most messages one push call takes.",
        c"A larger push is refused with an error naming this setting.",
        &PUSH_MAX_ITEMS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_max_batch",
        c"Largest batch one pop may ask for.",
        c"",
        &POP_MAX_BATCH,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_max_partitions",
        c"Most partitions one pop may claim.",
        c"",
        &POP_MAX_PARTITIONS,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_candidates",
        c"Candidate partitions a pop examines for each partition it may claim.",
        c"Candidates that are leased to others are skipped without waiting.",
        &POP_CANDIDATES,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_scan_window",
        c"Partitions of a queue a pop reads, from where its last pop stopped, to find candidates.",
        c"Only a window that finds none has the pop read every partition of the queue.",
        &POP_SCAN_WINDOW,
        16,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_memo_ms",
        c"How long a backend passes by the partitions of a queue it found done for a group.",
        c"A partition is passed by while no push raised its end and no cursor moved back; 0 turns it off.",
        &POP_MEMO_MS,
        0,
        3_600_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_memo_partitions",
        c"Most partitions a backend keeps found done, over its queues and groups.",
        c"Past it, the partitions of a queue read next are not kept.",
        &POP_MEMO_PARTITIONS,
        0,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_autopilot_batch",
        c"The batch of an autopilot pop that names none.",
        c"Capped by queen.pop_max_batch.",
        &POP_AUTOPILOT_BATCH,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_autopilot_partitions",
        c"Most partitions an autopilot pop that names no width claims.",
        c"It claims as many of them as have messages waiting, until its batch is full. \
          Capped by queen.pop_max_partitions.",
        &POP_AUTOPILOT_PARTITIONS,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ack_max_items",
        c"Most acknowledgements one ack call takes.",
        c"",
        &ACK_MAX_ITEMS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.stream_flush_quiet_ms",
        c"How long after a streaming state row was written an idle flush that touches it is put off.",
        c"A flush holds no lease: a row written since it read the state may hold another worker's batch.",
        &STREAM_FLUSH_QUIET_MS,
        0,
        60_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.stream_max_rows",
        c"Most state rows one streaming call reads or writes.",
        c"A read or a cycle past it is refused whole, never cut short.",
        &STREAM_MAX_ROWS,
        1,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ack_lookback_segments",
        c"Sidecar rows searched for an acknowledged id outside any lease.",
        c"Such an ack is of a message already done; one older than this is answered as unknown.",
        &ACK_LOOKBACK_SEGMENTS,
        0,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.decompress_max_bytes",
        c"Bytes one request may decompress to, over all its compressed parts \
          (binary push groups, timer payloads).",
        c"",
        &DECOMPRESS_MAX_BYTES,
        1024,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Most items one push call takes (`queen.push_max_items`).
pub fn push_max_items() -> usize {
    PUSH_MAX_ITEMS.get() as usize
}

/// Largest `batch` one pop may ask for (`queen.pop_max_batch`).
pub fn pop_max_batch() -> i64 {
    POP_MAX_BATCH.get() as i64
}

/// Most partitions one pop may claim (`queen.pop_max_partitions`).
pub fn pop_max_partitions() -> i64 {
    POP_MAX_PARTITIONS.get() as i64
}

/// Candidate partitions one pop examines per partition it may claim
/// (`queen.pop_candidates`).
pub fn pop_candidates() -> i64 {
    POP_CANDIDATES.get() as i64
}

/// Partitions of a queue a candidate window reads when it looks for
/// `candidates` (`queen.pop_scan_window`, never below `candidates`).
pub fn pop_scan_window(candidates: i64) -> i64 {
    (POP_SCAN_WINDOW.get() as i64).max(candidates)
}

/// How long a pop's memo of done partitions is used (ms; 0: not at all).
pub fn pop_memo_ms() -> i64 {
    POP_MEMO_MS.get() as i64
}

/// Most partitions a backend's memo keeps.
pub fn pop_memo_partitions() -> usize {
    POP_MEMO_PARTITIONS.get() as usize
}

/// The batch of an autopilot pop that names none, within
/// `queen.pop_max_batch` (`queen.pop_autopilot_batch`).
pub fn pop_autopilot_batch() -> i64 {
    (POP_AUTOPILOT_BATCH.get() as i64).min(pop_max_batch())
}

/// The widest an autopilot pop that names no width claims, within
/// `queen.pop_max_partitions` (`queen.pop_autopilot_partitions`).
pub fn pop_autopilot_partitions() -> i64 {
    (POP_AUTOPILOT_PARTITIONS.get() as i64).min(pop_max_partitions())
}

/// Partition ids a backend remembers for its next pushes
/// (`queen.push_known_partitions`).
pub fn push_known_partitions() -> usize {
    PUSH_KNOWN_PARTITIONS.get() as usize
}

/// Most requests one fused call takes (`queen.fused_max_requests`).
pub fn fused_max_requests() -> usize {
    FUSED_MAX_REQUESTS.get() as usize
}

/// Most acknowledgements one ack call takes (`queen.ack_max_items`).
pub fn ack_max_items() -> usize {
    ACK_MAX_ITEMS.get() as usize
}

/// Sidecar rows an ack outside any lease looks back over
/// (`queen.ack_lookback_segments`).
pub fn ack_lookback_segments() -> i64 {
    ACK_LOOKBACK_SEGMENTS.get() as i64
}

/// How long after a state row was written an idle flush that touches it is
/// put off, in milliseconds (`queen.stream_flush_quiet_ms`).
pub fn stream_flush_quiet_ms() -> i64 {
    STREAM_FLUSH_QUIET_MS.get() as i64
}

/// Most state rows one streaming call reads or writes
/// (`queen.stream_max_rows`).
pub fn stream_max_rows() -> i64 {
    STREAM_MAX_ROWS.get() as i64
}

/// Bytes of frames one segment a push writes holds at most
/// (`queen.segment_max_bytes`).
pub fn segment_max_bytes() -> usize {
    SEGMENT_MAX_BYTES.get() as usize
}

/// Bytes one request may decompress to (`queen.decompress_max_bytes`).
pub fn decompress_max_bytes() -> usize {
    DECOMPRESS_MAX_BYTES.get() as usize
}

// Commits that do not wait for the WAL flush (see `engine::soft_commit`).

/// `queen.pop_async_commit`: whether a transaction that wrote nothing but
/// one pop's lease commits without waiting for its WAL to reach disk
/// (default on; any session may set it).
static POP_ASYNC_COMMIT: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `queen.ack_async_commit`: whether a transaction that wrote nothing but
/// one ack call's cursor moves commits without waiting for its WAL to reach
/// disk (default on; any session may set it).
static ACK_ASYNC_COMMIT: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `queen.retention_async_commit`: whether a transaction that wrote nothing
/// but one retention step commits without waiting for its WAL to reach disk
/// (default on; any session may set it).
static RETENTION_ASYNC_COMMIT: GucSetting<bool> = GucSetting::<bool>::new(true);

fn register_commits() {
    GucRegistry::define_bool_guc(
        c"queen.pop_async_commit",
        c"A transaction whose only write is a pop's lease commits \
          without waiting for the WAL flush.",
        c"A crash before the next flush loses that lease and the batch is delivered again, \
          as on lease expiry.",
        &POP_ASYNC_COMMIT,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.ack_async_commit",
        c"A transaction whose only writes are one ack call's commits \
          without waiting for the WAL flush.",
        c"A crash before the next flush loses those acks and their messages are delivered again.",
        &ACK_ASYNC_COMMIT,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.retention_async_commit",
        c"A transaction whose only write is one retention step commits \
          without waiting for the WAL flush.",
        c"A crash before the next flush loses that step; the next cycle deletes its rows again.",
        &RETENTION_ASYNC_COMMIT,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// Whether a pop's lease alone commits without the flush
/// (`queen.pop_async_commit`).
pub fn pop_async_commit() -> bool {
    POP_ASYNC_COMMIT.get()
}

/// Whether one ack call's cursor moves alone commit without the flush
/// (`queen.ack_async_commit`).
pub fn ack_async_commit() -> bool {
    ACK_ASYNC_COMMIT.get()
}

/// Whether one retention step alone commits without the flush
/// (`queen.retention_async_commit`).
pub fn retention_async_commit() -> bool {
    RETENTION_ASYNC_COMMIT.get()
}

// Retention.

/// `queen.retention_interval_ms`: the cycle period, in milliseconds (the
/// cluster cadence, kept in the lease row; default 5 s, at least 100 ms).
static RETENTION_INTERVAL_MS: GucSetting<i32> = GucSetting::<i32>::new(5000);
/// `queen.retention_batch_size`: rows one retention step deletes at most
/// (`p_max_rows`; default 1000, 1 to 100 000).
static RETENTION_BATCH_SIZE: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.retention_advance_wait_ms`: how long a retention step's
/// watermark move waits for its partition (the pushes in flight) before the
/// step is undone and made again holding the partition from its start
/// (default 50 ms, 1 to 10 000; never past half of `deadlock_timeout`).
static RETENTION_ADVANCE_WAIT_MS: GucSetting<i32> = GucSetting::<i32>::new(50);
/// `queen.retention_parallelism`: concurrent step workers in phases 1 to 3
/// (default 1, at most 16).
static RETENTION_PARALLELISM: GucSetting<i32> = GucSetting::<i32>::new(1);
/// `queen.retention_due_cap`: due partitions per phase and cycle; 0 (the
/// default) derives batch x parallelism x 5.
static RETENTION_DUE_CAP: GucSetting<i32> = GucSetting::<i32>::new(0);
/// `queen.retention_safety_walk_ms`: period of the watermark safety walk, in
/// milliseconds (default a day); 0 stops the recurrence (never the first
/// backfill).
static RETENTION_SAFETY_WALK_MS: GucSetting<i32> = GucSetting::<i32>::new(86_400_000);
/// `queen.retention_compact_max`: replaced cursor states one retention
/// cycle deletes at most (default 100 000, 0 to 10 000 000; 0 stops the
/// compaction).
static RETENTION_COMPACT_MAX: GucSetting<i32> = GucSetting::<i32>::new(100_000);
/// `queen.retention_compact_batch`: rows of each kind one step of the
/// retention cycle's compaction deletes at most (default 10 000, 100 to
/// 1 000 000).
static RETENTION_COMPACT_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.partition_cleanup_enabled`: whether empty, idle partitions are
/// deleted (default on).
static PARTITION_CLEANUP_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `queen.partition_cleanup_days`: days a partition must be empty and idle
/// before it is deleted (default 30, 1 to 100 000).
static PARTITION_CLEANUP_DAYS: GucSetting<i32> = GucSetting::<i32>::new(30);
/// `queen.metrics_retention_days`: days observability rows are kept
/// (default 90, 1 to 100 000).
static METRICS_RETENTION_DAYS: GucSetting<i32> = GucSetting::<i32>::new(90);
/// `queen.metrics_interval_ms`: period of the metrics task, which writes
/// the per-minute series (default a minute; 0 stops it).
static METRICS_INTERVAL_MS: GucSetting<i32> = GucSetting::<i32>::new(60_000);
/// `queen.metrics_counters`: whether the message path counts its calls for
/// the metrics series (default on; off leaves them out of the series).
static METRICS_COUNTERS: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `queen.failed_retention`: the floor under per-queue DLQ retention, in
/// whole seconds (unit `s`; default 72 hours; 0: no floor).
static FAILED_RETENTION: GucSetting<i32> = GucSetting::<i32>::new(72 * 3600);

fn register_retention() {
    GucRegistry::define_int_guc(
        c"queen.retention_interval_ms",
        c"Period of the retention cycle, in milliseconds.",
        c"",
        &RETENTION_INTERVAL_MS,
        100,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.retention_compact_max",
        c"Replaced cursor states one retention cycle deletes at most.",
        c"0 stops the compaction: every pop, ack and renewal then leaves a row behind.",
        &RETENTION_COMPACT_MAX,
        0,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.retention_compact_batch",
        c"Rows of each kind one step of the retention cycle's compaction deletes at most.",
        c"",
        &RETENTION_COMPACT_BATCH,
        100,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.retention_batch_size",
        c"Rows one retention step deletes at most.",
        c"",
        &RETENTION_BATCH_SIZE,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.retention_advance_wait_ms",
        c"How long a retention step's watermark move waits for its partition, in milliseconds.",
        c"After that the step is undone and made again holding the partition from its start.",
        &RETENTION_ADVANCE_WAIT_MS,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.retention_parallelism",
        c"Concurrent retention step workers (1 to 16).",
        c"",
        &RETENTION_PARALLELISM,
        1,
        16,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.retention_due_cap",
        c"Due partitions per phase and cycle; 0 derives batch x parallelism x 5.",
        c"",
        &RETENTION_DUE_CAP,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.retention_safety_walk_ms",
        c"Period of the watermark safety walk; 0 stops it recurring.",
        c"",
        &RETENTION_SAFETY_WALK_MS,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.partition_cleanup_enabled",
        c"Whether empty, idle partitions are deleted.",
        c"",
        &PARTITION_CLEANUP_ENABLED,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.partition_cleanup_days",
        c"Days a partition must be empty and idle before it is deleted (at least 1).",
        c"",
        &PARTITION_CLEANUP_DAYS,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.metrics_retention_days",
        c"Days observability rows are kept.",
        c"",
        &METRICS_RETENTION_DAYS,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.metrics_interval_ms",
        c"Period of the metrics task that writes the per-minute series; 0 stops it.",
        c"",
        &METRICS_INTERVAL_MS,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.metrics_counters",
        c"Whether push, pop and ack count their calls for the metrics series.",
        c"",
        &METRICS_COUNTERS,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.failed_retention",
        c"Dead letters are kept at least this long, whatever a queue's dlqRetentionSeconds says.",
        c"0 removes the floor.",
        &FAILED_RETENTION,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::UNIT_S,
    );
}

/// The retention cycle period, in milliseconds
/// (`queen.retention_interval_ms`).
pub fn retention_interval_ms() -> i64 {
    RETENTION_INTERVAL_MS.get() as i64
}

/// Rows one retention step deletes at most (`queen.retention_batch_size`).
pub fn retention_batch_size() -> i32 {
    RETENTION_BATCH_SIZE.get()
}

/// Rows of each kind one compaction step deletes at most
/// (`queen.retention_compact_batch`).
pub fn retention_compact_batch() -> i32 {
    RETENTION_COMPACT_BATCH.get()
}

/// Replaced cursor states one retention cycle deletes at most
/// (`queen.retention_compact_max`).
pub fn retention_compact_max() -> i64 {
    RETENTION_COMPACT_MAX.get() as i64
}

/// How long a retention step's watermark move waits for its partition, in
/// milliseconds (`queen.retention_advance_wait_ms`).
pub fn retention_advance_wait_ms() -> i64 {
    RETENTION_ADVANCE_WAIT_MS.get() as i64
}

/// Concurrent retention step workers (`queen.retention_parallelism`).
pub fn retention_parallelism() -> i32 {
    RETENTION_PARALLELISM.get()
}

/// The effective due cap (`queen.retention_due_cap`, or what 0 derives).
pub fn retention_due_cap() -> i64 {
    match RETENTION_DUE_CAP.get() {
        0 => RETENTION_BATCH_SIZE.get() as i64 * RETENTION_PARALLELISM.get() as i64 * 5,
        n => n as i64,
    }
}

/// The watermark safety walk's period, in milliseconds
/// (`queen.retention_safety_walk_ms`).
pub fn retention_safety_walk_ms() -> i64 {
    RETENTION_SAFETY_WALK_MS.get() as i64
}

/// Whether empty, idle partitions are deleted
/// (`queen.partition_cleanup_enabled`).
pub fn partition_cleanup_enabled() -> bool {
    PARTITION_CLEANUP_ENABLED.get()
}

/// Days a partition stays empty and idle before it is deleted, at least 1
/// (`queen.partition_cleanup_days`).
pub fn partition_cleanup_days() -> i32 {
    PARTITION_CLEANUP_DAYS.get().max(1)
}

/// Days observability rows are kept (`queen.metrics_retention_days`).
pub fn metrics_retention_days() -> i32 {
    METRICS_RETENTION_DAYS.get()
}

/// Whether the message path counts its calls (`queen.metrics_counters`).
pub fn metrics_counters() -> bool {
    METRICS_COUNTERS.get()
}

/// The metrics task's period in milliseconds, 0 when it is stopped
/// (`queen.metrics_interval_ms`).
pub fn metrics_interval_ms() -> i64 {
    METRICS_INTERVAL_MS.get() as i64
}

/// The floor under per-queue DLQ retention, in seconds, never negative
/// (`queen.failed_retention`).
pub fn failed_retention_seconds() -> i32 {
    FAILED_RETENTION.get().max(0)
}

// The timer sweepers.

/// `queen.sweeper_workers`: sweeper background workers started at server
/// start (default 1; 0 to [`MAX_SWEEPERS`]).
static SWEEPER_WORKERS: GucSetting<i32> = GucSetting::<i32>::new(1);
/// `queen.sweeper_lease_ms`: how long a sweeper's claim on due timers lasts,
/// in milliseconds (default 30 s, at least 100 ms).
static SWEEPER_LEASE_MS: GucSetting<i32> = GucSetting::<i32>::new(30_000);
/// `queen.sweeper_claim_batch`: timers one claim takes at most (default 200,
/// 1 to 100 000).
static SWEEPER_CLAIM_BATCH: GucSetting<i32> = GucSetting::<i32>::new(200);
/// `queen.sweeper_cycle_max_rows`: timers one sweeper cycle fires at most
/// (default 5000, 1 to 10 000 000).
static SWEEPER_CYCLE_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(5000);
/// `queen.sweeper_max_fire_bytes`: payload bytes one fire transaction
/// carries at most (default 8 MiB, at least 1 KiB).
static SWEEPER_MAX_FIRE_BYTES: GucSetting<i32> = GucSetting::<i32>::new(8 * 1024 * 1024);
/// `queen.sweeper_max_fire_attempts`: failed fires of one timer before it
/// is set aside (default 5, 1 to 1000).
static SWEEPER_MAX_FIRE_ATTEMPTS: GucSetting<i32> = GucSetting::<i32>::new(5);
/// `queen.sweeper_max_sleep_ms`: the longest a sweeper sleeps, in
/// milliseconds (default 1 s, 5 ms to 60 s).
static SWEEPER_MAX_SLEEP_MS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.timers_schedule_enabled`: the kill switch of scheduling (default
/// on; harmless to stop).
static TIMERS_SCHEDULE_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `queen.timers_fire_enabled`: the kill switch of firing (default on;
/// stopping it accumulates promised work).
static TIMERS_FIRE_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);

fn register_sweeper() {
    GucRegistry::define_int_guc(
        c"queen.sweeper_workers",
        c"Sweeper background workers (they share every shard; 0 starts none).",
        c"",
        &SWEEPER_WORKERS,
        0,
        MAX_SWEEPERS as i32,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.sweeper_lease_ms",
        c"How long a sweeper's claim on due timers lasts.",
        c"",
        &SWEEPER_LEASE_MS,
        100,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.sweeper_claim_batch",
        c"Timers one claim takes at most.",
        c"",
        &SWEEPER_CLAIM_BATCH,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.sweeper_cycle_max_rows",
        c"Timers one sweeper cycle fires at most.",
        c"",
        &SWEEPER_CYCLE_MAX_ROWS,
        1,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.sweeper_max_fire_bytes",
        c"Payload bytes one fire transaction carries at most.",
        c"",
        &SWEEPER_MAX_FIRE_BYTES,
        1024,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.sweeper_max_fire_attempts",
        c"Fires of one timer that may fail before it is set aside (queen.log_timers_failed).",
        c"",
        &SWEEPER_MAX_FIRE_ATTEMPTS,
        1,
        1000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.sweeper_max_sleep_ms",
        c"The longest a sweeper sleeps.",
        c"",
        &SWEEPER_MAX_SLEEP_MS,
        5,
        60_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.timers_schedule_enabled",
        c"Whether timers can be scheduled.",
        c"",
        &TIMERS_SCHEDULE_ENABLED,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.timers_fire_enabled",
        c"Whether the sweepers fire due timers.",
        c"",
        &TIMERS_FIRE_ENABLED,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Sweeper workers started at server start (`queen.sweeper_workers`).
pub fn sweeper_workers() -> i32 {
    SWEEPER_WORKERS.get()
}

/// A sweeper's claim, in milliseconds (`queen.sweeper_lease_ms`).
pub fn sweeper_lease_ms() -> i32 {
    SWEEPER_LEASE_MS.get()
}

/// Timers one claim takes at most (`queen.sweeper_claim_batch`).
pub fn sweeper_claim_batch() -> i32 {
    SWEEPER_CLAIM_BATCH.get()
}

/// Timers one sweeper cycle fires at most (`queen.sweeper_cycle_max_rows`).
pub fn sweeper_cycle_max_rows() -> i32 {
    SWEEPER_CYCLE_MAX_ROWS.get()
}

/// Payload bytes one fire transaction carries at most
/// (`queen.sweeper_max_fire_bytes`).
pub fn sweeper_max_fire_bytes() -> i64 {
    SWEEPER_MAX_FIRE_BYTES.get() as i64
}

/// Failed fires of one timer before it is set aside
/// (`queen.sweeper_max_fire_attempts`).
pub fn sweeper_max_fire_attempts() -> i32 {
    SWEEPER_MAX_FIRE_ATTEMPTS.get()
}

/// The longest a sweeper sleeps, in milliseconds (`queen.sweeper_max_sleep_ms`).
pub fn sweeper_max_sleep_ms() -> i64 {
    SWEEPER_MAX_SLEEP_MS.get() as i64
}

/// Whether timers can be scheduled (`queen.timers_schedule_enabled`).
pub fn timers_schedule_enabled() -> bool {
    TIMERS_SCHEDULE_ENABLED.get()
}

/// Whether the sweepers fire due timers (`queen.timers_fire_enabled`).
pub fn timers_fire_enabled() -> bool {
    TIMERS_FIRE_ENABLED.get()
}

// The key-value store and locks.

/// `queen.kv_expire_every_ms`: period of the sweepers' prune of expired
/// keys, in milliseconds (default 1 s, at least 10 ms).
static KV_EXPIRE_EVERY_MS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.kv_expire_batch`: expired keys one prune pass deletes at most
/// (default 1000, 1 to 1 000 000).
static KV_EXPIRE_BATCH: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.kv_expired_count_max`: expired-but-present keys a prune pass
/// counts at most (default 100 000, at least 64).
static KV_EXPIRED_COUNT_MAX: GucSetting<i32> = GucSetting::<i32>::new(100_000);
/// `queen.kv_usage_every_ms`: period of the per-namespace usage rollup that
/// quotas read, in milliseconds (default 5 minutes, at least 10 ms).
static KV_USAGE_EVERY_MS: GucSetting<i32> = GucSetting::<i32>::new(300_000);
/// `queen.kv_usage_batch`: keys one statement of the usage rollup reads
/// (default 10 000, 1 to 10 000 000).
static KV_USAGE_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.kv_batch_max_ops`: most operations one KV or locks call takes
/// (default 1000, 1 to 1 000 000).
static KV_BATCH_MAX_OPS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.kv_key_max_bytes`: the longest KV key, in bytes (default 1024, 1
/// to 65 535).
static KV_KEY_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(1024);
/// `queen.kv_value_max_bytes`: the largest KV value (its JSON text), in
/// bytes (default 1 MiB, at least 16).
static KV_VALUE_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(1024 * 1024);
/// `queen.kv_read_max_bytes`: bytes of values one getMany or getPrefix
/// answers at most, the rest marked truncated (default 4 MiB, at least
/// 1 KiB).
static KV_READ_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(4 * 1024 * 1024);
/// `queen.kv_prefix_max_rows`: rows one getPrefix answers at most, a larger
/// limit being clamped (default 1000, 1 to 1 000 000).
static KV_PREFIX_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(1000);

fn register_kv() {
    GucRegistry::define_int_guc(
        c"queen.kv_expire_every_ms",
        c"Period of the sweepers' prune of expired keys.",
        c"",
        &KV_EXPIRE_EVERY_MS,
        10,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_expire_batch",
        c"Expired keys one prune pass deletes at most.",
        c"",
        &KV_EXPIRE_BATCH,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_expired_count_max",
        c"Expired-but-present keys a prune pass counts at most.",
        c"",
        &KV_EXPIRED_COUNT_MAX,
        64,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_usage_every_ms",
        c"Period of the per-namespace usage rollup that quotas read.",
        c"",
        &KV_USAGE_EVERY_MS,
        10,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_usage_batch",
        c"Keys one statement of the usage rollup reads.",
        c"",
        &KV_USAGE_BATCH,
        1,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_batch_max_ops",
        c"Most operations one KV or locks call takes.",
        c"",
        &KV_BATCH_MAX_OPS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_key_max_bytes",
        c"Longest KV key, in bytes.",
        c"",
        &KV_KEY_MAX_BYTES,
        1,
        65_535,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_value_max_bytes",
        c"Largest KV value (its JSON text), in bytes.",
        c"",
        &KV_VALUE_MAX_BYTES,
        16,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_read_max_bytes",
        c"Bytes of values one getMany or getPrefix answers at most; the rest is marked truncated.",
        c"",
        &KV_READ_MAX_BYTES,
        1024,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.kv_prefix_max_rows",
        c"Rows one getPrefix answers at most (a larger limit is clamped).",
        c"",
        &KV_PREFIX_MAX_ROWS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The period of the prune of expired keys (`queen.kv_expire_every_ms`).
pub fn kv_expire_every() -> Duration {
    Duration::from_millis(KV_EXPIRE_EVERY_MS.get() as u64)
}

/// Expired keys one prune pass deletes at most (`queen.kv_expire_batch`).
pub fn kv_expire_batch() -> i32 {
    KV_EXPIRE_BATCH.get()
}

/// Expired-but-present keys a prune pass counts at most
/// (`queen.kv_expired_count_max`).
pub fn kv_expired_count_max() -> i32 {
    KV_EXPIRED_COUNT_MAX.get()
}

/// The period of the usage rollup (`queen.kv_usage_every_ms`).
pub fn kv_usage_every() -> Duration {
    Duration::from_millis(KV_USAGE_EVERY_MS.get() as u64)
}

/// Keys one statement of the usage rollup reads (`queen.kv_usage_batch`).
pub fn kv_usage_batch() -> i32 {
    KV_USAGE_BATCH.get()
}

/// Most operations one KV or locks call takes (`queen.kv_batch_max_ops`).
pub fn kv_batch_max_ops() -> usize {
    KV_BATCH_MAX_OPS.get() as usize
}

/// The longest KV key, in bytes (`queen.kv_key_max_bytes`).
pub fn kv_key_max_bytes() -> usize {
    KV_KEY_MAX_BYTES.get() as usize
}

/// The largest KV value's JSON text, in bytes (`queen.kv_value_max_bytes`).
pub fn kv_value_max_bytes() -> usize {
    KV_VALUE_MAX_BYTES.get() as usize
}

/// Bytes of values one getMany or getPrefix answers at most
/// (`queen.kv_read_max_bytes`).
pub fn kv_read_max_bytes() -> i64 {
    KV_READ_MAX_BYTES.get() as i64
}

/// Rows one getPrefix answers at most (`queen.kv_prefix_max_rows`).
pub fn kv_prefix_max_rows() -> i64 {
    KV_PREFIX_MAX_ROWS.get() as i64
}

// Reads by offset and the resource listings.

/// `queen.fetch_entry_max_bytes`: the most payload bytes one fetch entry
/// answers, whatever its `maxBytes` asks (default 8 MiB, at least 1).
static FETCH_ENTRY_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(8 * 1024 * 1024);
/// `queen.fetch_call_max_bytes`: the most payload bytes one fetch call
/// answers over all its entries (default 64 MiB, at least 1).
static FETCH_CALL_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(64 * 1024 * 1024);
/// `queen.fetch_max_entries`: the most entries one fetch call takes
/// (default 1024, 1 to 65 536).
static FETCH_MAX_ENTRIES: GucSetting<i32> = GucSetting::<i32>::new(1024);
/// `queen.read_page_max_rows`: the most rows one page of a listing answers
/// (timers of a queue, changed partitions, the partitions backlog; default
/// 1000, 1 to 100 000). A larger `limit` is clamped to it.
static READ_PAGE_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.resources_max_partitions`: the most partitions one queue's
/// resource answer lists (default 10 000, 1 to 1 000 000); `totals` count
/// them all.
static RESOURCES_MAX_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(10_000);

fn register_reads() {
    GucRegistry::define_int_guc(
        c"queen.fetch_entry_max_bytes",
        c"Most payload bytes one fetch entry answers.",
        c"An entry asking for more gets this many; its first record is always delivered.",
        &FETCH_ENTRY_MAX_BYTES,
        1,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.fetch_call_max_bytes",
        c"Most payload bytes one fetch call answers over all its entries.",
        c"The call's first record is always delivered.",
        &FETCH_CALL_MAX_BYTES,
        1,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.fetch_max_entries",
        c"Most entries one fetch call takes.",
        c"A larger call is refused with an error naming this setting.",
        &FETCH_MAX_ENTRIES,
        1,
        65_536,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.read_page_max_rows",
        c"Most rows one page of a listing answers.",
        c"Timers of a queue, changed partitions, the partitions backlog; \
          a larger limit is clamped.",
        &READ_PAGE_MAX_ROWS,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.resources_max_partitions",
        c"Most partitions one queue's resource answer lists.",
        c"",
        &RESOURCES_MAX_PARTITIONS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Most payload bytes one fetch entry answers (`queen.fetch_entry_max_bytes`).
pub fn fetch_entry_max_bytes() -> i64 {
    FETCH_ENTRY_MAX_BYTES.get() as i64
}

/// Most payload bytes one fetch call answers (`queen.fetch_call_max_bytes`).
pub fn fetch_call_max_bytes() -> i64 {
    FETCH_CALL_MAX_BYTES.get() as i64
}

/// Most entries one fetch call takes (`queen.fetch_max_entries`).
pub fn fetch_max_entries() -> usize {
    FETCH_MAX_ENTRIES.get() as usize
}

/// Most rows one page of a listing answers (`queen.read_page_max_rows`).
pub fn read_page_max_rows() -> i64 {
    READ_PAGE_MAX_ROWS.get() as i64
}

/// Most partitions one queue's resource answer lists
/// (`queen.resources_max_partitions`).
pub fn resources_max_partitions() -> i64 {
    RESOURCES_MAX_PARTITIONS.get() as i64
}

// The message and trace readers.

/// `queen.traces_max_page`: most traces one trace read answers (default
/// 1000, 1 to 100 000).
static TRACES_MAX_PAGE: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.messages_max_page`: most messages one message listing answers
/// (default 1000, 1 to 100 000).
static MESSAGES_MAX_PAGE: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.messages_scan_max`: most segments (and partitions) one message
/// listing reads (default 10 000, 1 to 1 000 000).
static MESSAGES_SCAN_MAX: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.messages_scan_max_bytes`: most stored segment bytes one message
/// listing reads (default 64 MiB, at least 1 KiB); its first segment is
/// always read.
static MESSAGES_SCAN_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(64 * 1024 * 1024);
/// `queen.message_lookup_segments`: a partition's newest sidecar rows that a
/// lookup of one message by transaction id searches (default 100 000, 1 to
/// 100 000 000).
static MESSAGE_LOOKUP_SEGMENTS: GucSetting<i32> = GucSetting::<i32>::new(100_000);

fn register_messages() {
    GucRegistry::define_int_guc(
        c"queen.traces_max_page",
        c"Most traces one trace read answers.",
        c"A larger limit is refused with an error naming this setting.",
        &TRACES_MAX_PAGE,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.messages_max_page",
        c"Most messages one message listing answers.",
        c"A larger limit is refused with an error naming this setting.",
        &MESSAGES_MAX_PAGE,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.messages_scan_max",
        c"Most segments, and partitions, one message listing reads.",
        c"A listing past this many messages (offset plus limit) is refused.",
        &MESSAGES_SCAN_MAX,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.messages_scan_max_bytes",
        c"Most stored segment bytes one message listing reads.",
        c"A listing that stops here answers hasMore and a cursor to read on from; \
          its first segment is always read.",
        &MESSAGES_SCAN_MAX_BYTES,
        1024,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.message_lookup_segments",
        c"Newest sidecar rows of a partition searched for a message by transaction id.",
        c"A message older than these is found only through its dead letters.",
        &MESSAGE_LOOKUP_SEGMENTS,
        1,
        100_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Most traces one trace read answers (`queen.traces_max_page`).
pub fn traces_max_page() -> i64 {
    TRACES_MAX_PAGE.get() as i64
}

/// Most messages one message listing answers (`queen.messages_max_page`).
pub fn messages_max_page() -> i64 {
    MESSAGES_MAX_PAGE.get() as i64
}

/// Most segments and partitions one message listing reads
/// (`queen.messages_scan_max`).
pub fn messages_scan_max() -> i64 {
    MESSAGES_SCAN_MAX.get() as i64
}

/// Most stored segment bytes one message listing reads
/// (`queen.messages_scan_max_bytes`).
pub fn messages_scan_max_bytes() -> i64 {
    MESSAGES_SCAN_MAX_BYTES.get() as i64
}

/// Newest sidecar rows searched for a message by transaction id
/// (`queen.message_lookup_segments`).
pub fn message_lookup_segments() -> i64 {
    MESSAGE_LOOKUP_SEGMENTS.get() as i64
}

// Ephemeral queues.

/// `queen.ephemeral_max_bytes`: maxBytes of an ephemeral queue that does not declare one, in bytes
/// (default 64 MiB, at least 1).
static EPHEMERAL_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(64 * 1024 * 1024);
/// `queen.ephemeral_max_length`: maxLength of an ephemeral queue that does not declare one, in
/// messages (default 100 000, at least 1).
static EPHEMERAL_MAX_LENGTH: GucSetting<i32> = GucSetting::<i32>::new(100_000);
/// `queen.ephemeral_ttl_seconds`: ttlSeconds of an ephemeral queue that does not declare one
/// (default 0: messages do not expire).
static EPHEMERAL_TTL_SECONDS: GucSetting<i32> = GucSetting::<i32>::new(0);
/// `queen.ephemeral_lease_seconds`: leaseSeconds of an ephemeral queue that does not declare one
/// (default 30, at least 1).
static EPHEMERAL_LEASE_SECONDS: GucSetting<i32> = GucSetting::<i32>::new(30);
/// `queen.ephemeral_retry_limit`: retryLimit of an ephemeral queue that does not declare one:
/// deliveries a message gets before a failure drops it (default 5).
static EPHEMERAL_RETRY_LIMIT: GucSetting<i32> = GucSetting::<i32>::new(5);
/// `queen.ephemeral_push_max_messages`: most messages one ephemeral push takes (default 10 000, 1
/// to 10 000).
static EPHEMERAL_PUSH_MAX_MESSAGES: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.ephemeral_ack_max`: most acks one ephemeral ack call takes (default 10 000, 1 to 10 000).
static EPHEMERAL_ACK_MAX: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.ephemeral_pop_max_batch`: largest batch one ephemeral pop hands out, a larger one being
/// clamped (default 10 000, 1 to 10 000).
static EPHEMERAL_POP_MAX_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.ephemeral_pop_max_partitions`: partitions one ephemeral pop without a partition visits at
/// most (default 100, 1 to 100 000).
static EPHEMERAL_POP_MAX_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(100);
/// `queen.ephemeral_cleanup_batch`: rows one cleanup step of the ephemeral push, pop and ack path
/// removes at most: messages every group has passed, expired or dropped ones, and the rows of a
/// reset or deleted queue (default 1000, 1 to 1 000 000).
static EPHEMERAL_CLEANUP_BATCH: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.ephemeral_compact_max`: rows the retention cycle's compaction of ephemeral queues
/// deletes at most a cycle (replaced versions, messages below a tail, settled leases; default
/// 1 000 000, 0 to 100 000 000; 0 stops it).
static EPHEMERAL_COMPACT_MAX: GucSetting<i32> = GucSetting::<i32>::new(1_000_000);
/// `queen.timers_compact_max`: rows of fired timers (the timer, its claims, its mark) the
/// retention cycle's compaction deletes at most a cycle (default 1 000 000, 0 to 100 000 000;
/// 0 stops it).
static TIMERS_COMPACT_MAX: GucSetting<i32> = GucSetting::<i32>::new(1_000_000);
/// `queen.ephemeral_list_max`: queues, partitions and groups one ephemeral listing or depth read
/// answers at most (default 1000, 1 to 1 000 000).
static EPHEMERAL_LIST_MAX: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.ephemeral_implicit_idle_seconds`: an implicit ephemeral queue (never declared) that holds
/// no message and that no push or pop has named for this long is removed by the retention cycle
/// (default 300; 0: never).
static EPHEMERAL_IMPLICIT_IDLE_SECONDS: GucSetting<i32> = GucSetting::<i32>::new(300);
/// `queen.ephemeral_group_idle_seconds`: a consumer group of an ephemeral queue that no pop has
/// named for this long is forgotten by the retention cycle: what the other groups have read is
/// removed without waiting for it (default 3600; 0: never).
static EPHEMERAL_GROUP_IDLE_SECONDS: GucSetting<i32> = GucSetting::<i32>::new(3600);
/// `queen.ephemeral_policy`: policy of an ephemeral queue that does not
/// declare one, `reject` or `dropOldest` (default `reject`).
static EPHEMERAL_POLICY: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"reject"));

fn register_ephemeral() {
    GucRegistry::define_int_guc(
        c"queen.ephemeral_max_bytes",
        c"Default maxBytes of an ephemeral queue.",
        c"",
        &EPHEMERAL_MAX_BYTES,
        1,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_max_length",
        c"Default maxLength of an ephemeral queue.",
        c"",
        &EPHEMERAL_MAX_LENGTH,
        1,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_ttl_seconds",
        c"Default ttlSeconds of an ephemeral queue (0: none).",
        c"",
        &EPHEMERAL_TTL_SECONDS,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_lease_seconds",
        c"Default leaseSeconds of an ephemeral queue.",
        c"",
        &EPHEMERAL_LEASE_SECONDS,
        1,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_retry_limit",
        c"Default retryLimit of an ephemeral queue.",
        c"",
        &EPHEMERAL_RETRY_LIMIT,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_push_max_messages",
        c"Most messages one ephemeral push takes.",
        c"",
        &EPHEMERAL_PUSH_MAX_MESSAGES,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_ack_max",
        c"Most acks one ephemeral ack call takes.",
        c"",
        &EPHEMERAL_ACK_MAX,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_pop_max_batch",
        c"Largest batch of one ephemeral pop.",
        c"",
        &EPHEMERAL_POP_MAX_BATCH,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_pop_max_partitions",
        c"Partitions one ephemeral pop without a partition visits at most.",
        c"",
        &EPHEMERAL_POP_MAX_PARTITIONS,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_cleanup_batch",
        c"Rows one ephemeral cleanup step removes at most.",
        c"",
        &EPHEMERAL_CLEANUP_BATCH,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_compact_max",
        c"Rows the retention cycle's compaction of ephemeral queues deletes at most a cycle.",
        c"0 stops it: every push, pop and ack then leaves its rows behind.",
        &EPHEMERAL_COMPACT_MAX,
        0,
        100_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.timers_compact_max",
        c"Rows of fired timers the retention cycle's compaction deletes at most a cycle.",
        c"0 stops it: every fired timer then stays, marked done.",
        &TIMERS_COMPACT_MAX,
        0,
        100_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_list_max",
        c"Rows one ephemeral listing answers at most.",
        c"",
        &EPHEMERAL_LIST_MAX,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_implicit_idle_seconds",
        c"An empty implicit ephemeral queue unused this long is removed (0: never).",
        c"",
        &EPHEMERAL_IMPLICIT_IDLE_SECONDS,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ephemeral_group_idle_seconds",
        c"An ephemeral consumer group no pop named this long is forgotten (0: never).",
        c"",
        &EPHEMERAL_GROUP_IDLE_SECONDS,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"queen.ephemeral_policy",
        c"Default policy of an ephemeral queue: reject or dropOldest.",
        c"",
        &EPHEMERAL_POLICY,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// An empty implicit ephemeral queue unused this long is removed; 0: never.
/// (`queen.ephemeral_implicit_idle_seconds`).
pub fn ephemeral_implicit_idle_seconds() -> i64 {
    EPHEMERAL_IMPLICIT_IDLE_SECONDS.get() as i64
}

/// An ephemeral consumer group no pop named this long is forgotten; 0:
/// never. (`queen.ephemeral_group_idle_seconds`).
pub fn ephemeral_group_idle_seconds() -> i64 {
    EPHEMERAL_GROUP_IDLE_SECONDS.get() as i64
}

/// Default maxBytes of an ephemeral queue. (`queen.ephemeral_max_bytes`).
pub fn ephemeral_max_bytes() -> i64 {
    EPHEMERAL_MAX_BYTES.get() as i64
}

/// Default maxLength of an ephemeral queue. (`queen.ephemeral_max_length`).
pub fn ephemeral_max_length() -> i64 {
    EPHEMERAL_MAX_LENGTH.get() as i64
}

/// Default ttlSeconds of an ephemeral queue (0: none). (`queen.ephemeral_ttl_seconds`).
pub fn ephemeral_ttl_seconds() -> i64 {
    EPHEMERAL_TTL_SECONDS.get() as i64
}

/// Default leaseSeconds of an ephemeral queue. (`queen.ephemeral_lease_seconds`).
pub fn ephemeral_lease_seconds() -> i64 {
    EPHEMERAL_LEASE_SECONDS.get() as i64
}

/// Default retryLimit of an ephemeral queue. (`queen.ephemeral_retry_limit`).
pub fn ephemeral_retry_limit() -> i64 {
    EPHEMERAL_RETRY_LIMIT.get() as i64
}

/// Most messages one ephemeral push takes. (`queen.ephemeral_push_max_messages`).
pub fn ephemeral_push_max_messages() -> usize {
    EPHEMERAL_PUSH_MAX_MESSAGES.get() as usize
}

/// Most acks one ephemeral ack call takes. (`queen.ephemeral_ack_max`).
pub fn ephemeral_ack_max() -> usize {
    EPHEMERAL_ACK_MAX.get() as usize
}

/// Largest batch of one ephemeral pop. (`queen.ephemeral_pop_max_batch`).
pub fn ephemeral_pop_max_batch() -> i64 {
    EPHEMERAL_POP_MAX_BATCH.get() as i64
}

/// Partitions one ephemeral pop without a partition visits at most.
/// (`queen.ephemeral_pop_max_partitions`).
pub fn ephemeral_pop_max_partitions() -> i64 {
    EPHEMERAL_POP_MAX_PARTITIONS.get() as i64
}

/// Rows one ephemeral cleanup step removes at most. (`queen.ephemeral_cleanup_batch`).
pub fn ephemeral_cleanup_batch() -> i64 {
    EPHEMERAL_CLEANUP_BATCH.get() as i64
}

/// Rows of fired timers the cycle's compaction deletes at most a cycle
/// (`queen.timers_compact_max`).
pub fn timers_compact_max() -> i64 {
    TIMERS_COMPACT_MAX.get() as i64
}

/// Rows the cycle's ephemeral compaction deletes at most a cycle
/// (`queen.ephemeral_compact_max`).
pub fn ephemeral_compact_max() -> i64 {
    EPHEMERAL_COMPACT_MAX.get() as i64
}

/// Rows one ephemeral listing answers at most. (`queen.ephemeral_list_max`).
pub fn ephemeral_list_max() -> i64 {
    EPHEMERAL_LIST_MAX.get() as i64
}

/// The default policy of an ephemeral queue (`queen.ephemeral_policy`).
pub fn ephemeral_policy() -> String {
    EPHEMERAL_POLICY
        .get()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|| "reject".into())
}
