//! Retention.

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

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

pub(super) fn register_retention() {
    register_retention_cycle();
    register_cleanup();
}

/// The retention cycle and its steps.
fn register_retention_cycle() {
    register_retention_cadence();
    register_retention_steps();
}

/// The retention cycle's cadence and reach.
fn register_retention_cadence() {
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
}

/// The bounds of a retention step.
fn register_retention_steps() {
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
}

/// The cleanup of empty partitions, metrics and dead letters.
fn register_cleanup() {
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
