//! Settings, as GUCs under the `queen.` prefix with the unit in the name.

use std::ffi::CString;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

/// Sweeper workers that can be woken (the bound of queen.sweeper_workers).
pub const MAX_SWEEPERS: usize = 16;

/// The database the background workers connect to.
pub static DATABASE_NAME: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));
/// Most items one push call takes.
pub static PUSH_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// Largest `batch` one pop may ask for.
pub static POP_MAX_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// Most partitions one pop may claim.
pub static POP_MAX_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(100);
/// Most candidate partitions one pop examines (per claimed partition).
pub static POP_CANDIDATES: GucSetting<i32> = GucSetting::<i32>::new(16);
/// Whether a transaction that wrote nothing but one pop's lease commits
/// without waiting for its WAL to reach disk (see `soft_commit`).
pub static POP_ASYNC_COMMIT: GucSetting<bool> = GucSetting::<bool>::new(true);
/// Whether a transaction that wrote nothing but one ack call's cursor moves
/// commits without waiting for its WAL to reach disk (see `soft_commit`).
pub static ACK_ASYNC_COMMIT: GucSetting<bool> = GucSetting::<bool>::new(true);
/// Sidecar rows an ack of an id outside any lease looks back over.
pub static ACK_LOOKBACK_SEGMENTS: GucSetting<i32> = GucSetting::<i32>::new(64);
/// Most acknowledgements one ack call takes.
pub static ACK_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);

/// Retention: the cycle period (the cluster cadence, kept in the lease row).
pub static RETENTION_INTERVAL_MS: GucSetting<i32> = GucSetting::<i32>::new(5000);
/// Rows one retention step deletes at most (`p_max_rows`).
pub static RETENTION_BATCH_SIZE: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// Concurrent step workers in phases 1 to 3.
pub static RETENTION_PARALLELISM: GucSetting<i32> = GucSetting::<i32>::new(1);
/// Due partitions per phase and cycle; 0 derives batch x parallelism x 5.
pub static RETENTION_DUE_CAP: GucSetting<i32> = GucSetting::<i32>::new(0);
/// Period of the watermark safety walk; 0 stops the recurrence (never the first backfill).
pub static RETENTION_SAFETY_WALK_MS: GucSetting<i32> = GucSetting::<i32>::new(86_400_000);
/// How long a claimed maintenance lease lasts; a dead holder stalls its task at most this long.
pub static MAINTENANCE_LEASE_MS: GucSetting<i32> = GucSetting::<i32>::new(60_000);
pub static PARTITION_CLEANUP_DAYS: GucSetting<i32> = GucSetting::<i32>::new(30);
pub static PARTITION_CLEANUP_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static METRICS_RETENTION_DAYS: GucSetting<i32> = GucSetting::<i32>::new(90);
/// The floor under per-queue DLQ retention, in whole seconds (0: no floor).
pub static FAILED_RETENTION: GucSetting<i32> = GucSetting::<i32>::new(72 * 3600);
/// Sweeper: background workers started (at server start).
pub static SWEEPER_WORKERS: GucSetting<i32> = GucSetting::<i32>::new(1);
pub static SWEEPER_LEASE_MS: GucSetting<i32> = GucSetting::<i32>::new(30_000);
pub static SWEEPER_CLAIM_BATCH: GucSetting<i32> = GucSetting::<i32>::new(200);
pub static SWEEPER_CYCLE_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(5000);
pub static SWEEPER_MAX_FIRE_BYTES: GucSetting<i32> = GucSetting::<i32>::new(8 * 1024 * 1024);
/// Failed fires of one timer before it is set aside.
pub static SWEEPER_MAX_FIRE_ATTEMPTS: GucSetting<i32> = GucSetting::<i32>::new(5);
pub static SWEEPER_MAX_SLEEP_MS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// Kill switches: scheduling (harmless to stop) and firing (stopping it
/// accumulates promised work).
pub static TIMERS_SCHEDULE_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static TIMERS_FIRE_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static KV_EXPIRE_EVERY_MS: GucSetting<i32> = GucSetting::<i32>::new(1000);
pub static KV_EXPIRE_BATCH: GucSetting<i32> = GucSetting::<i32>::new(1000);
pub static KV_EXPIRED_COUNT_MAX: GucSetting<i32> = GucSetting::<i32>::new(100_000);
pub static KV_USAGE_EVERY_MS: GucSetting<i32> = GucSetting::<i32>::new(300_000);
pub static KV_USAGE_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
pub static KV_BATCH_MAX_OPS: GucSetting<i32> = GucSetting::<i32>::new(1000);
pub static KV_KEY_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(1024);
pub static KV_VALUE_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(1024 * 1024);
pub static KV_READ_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(4 * 1024 * 1024);
pub static KV_PREFIX_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// Bytes one request may decompress to, over all its compressed parts.
pub static DECOMPRESS_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(16 * 1024 * 1024);
/// Whether the background workers run at all (they still need shared_preload_libraries).
pub static WORKERS_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);

/// The effective due cap.
pub fn retention_due_cap() -> i64 {
    match RETENTION_DUE_CAP.get() {
        0 => RETENTION_BATCH_SIZE.get() as i64 * RETENTION_PARALLELISM.get() as i64 * 5,
        n => n as i64,
    }
}

/// A maintenance setting: read from postgresql.conf by the workers (reloaded
/// on SIGHUP), and settable by a superuser session that drives the cycle
/// from SQL.
fn int(
    name: &'static std::ffi::CStr,
    short: &'static std::ffi::CStr,
    setting: &'static GucSetting<i32>,
    min: i32,
    max: i32,
) {
    GucRegistry::define_int_guc(
        name,
        short,
        c"",
        setting,
        min,
        max,
        GucContext::Suset,
        GucFlags::default(),
    );
}

pub fn register() {
    int(
        c"queen.retention_interval_ms",
        c"Period of the retention cycle, in milliseconds.",
        &RETENTION_INTERVAL_MS,
        100,
        i32::MAX,
    );
    int(
        c"queen.retention_batch_size",
        c"Rows one retention step deletes at most.",
        &RETENTION_BATCH_SIZE,
        1,
        100_000,
    );
    int(
        c"queen.retention_parallelism",
        c"Concurrent retention step workers (1 to 16).",
        &RETENTION_PARALLELISM,
        1,
        16,
    );
    int(
        c"queen.retention_due_cap",
        c"Due partitions per phase and cycle; 0 derives batch x parallelism x 5.",
        &RETENTION_DUE_CAP,
        0,
        i32::MAX,
    );
    int(
        c"queen.retention_safety_walk_ms",
        c"Period of the watermark safety walk; 0 stops it recurring.",
        &RETENTION_SAFETY_WALK_MS,
        0,
        i32::MAX,
    );
    int(
        c"queen.maintenance_lease_ms",
        c"Lease of a claimed maintenance task, in milliseconds.",
        &MAINTENANCE_LEASE_MS,
        1000,
        i32::MAX,
    );
    int(
        c"queen.partition_cleanup_days",
        c"Days a partition must be empty and idle before it is deleted (at least 1).",
        &PARTITION_CLEANUP_DAYS,
        1,
        100_000,
    );
    int(
        c"queen.metrics_retention_days",
        c"Days observability rows are kept.",
        &METRICS_RETENTION_DAYS,
        1,
        100_000,
    );
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
    int(
        c"queen.sweeper_lease_ms",
        c"How long a sweeper's claim on due timers lasts.",
        &SWEEPER_LEASE_MS,
        100,
        i32::MAX,
    );
    int(
        c"queen.sweeper_claim_batch",
        c"Timers one claim takes at most.",
        &SWEEPER_CLAIM_BATCH,
        1,
        100_000,
    );
    int(
        c"queen.sweeper_cycle_max_rows",
        c"Timers one sweeper cycle fires at most.",
        &SWEEPER_CYCLE_MAX_ROWS,
        1,
        10_000_000,
    );
    int(
        c"queen.sweeper_max_fire_bytes",
        c"Payload bytes one fire transaction carries at most.",
        &SWEEPER_MAX_FIRE_BYTES,
        1024,
        i32::MAX,
    );
    int(
        c"queen.sweeper_max_fire_attempts",
        c"Fires of one timer that may fail before it is set aside (queen.log_timers_failed).",
        &SWEEPER_MAX_FIRE_ATTEMPTS,
        1,
        1000,
    );
    int(
        c"queen.sweeper_max_sleep_ms",
        c"The longest a sweeper sleeps.",
        &SWEEPER_MAX_SLEEP_MS,
        5,
        60_000,
    );
    int(
        c"queen.kv_expire_every_ms",
        c"Period of the sweepers' prune of expired keys.",
        &KV_EXPIRE_EVERY_MS,
        10,
        i32::MAX,
    );
    int(
        c"queen.kv_expire_batch",
        c"Expired keys one prune pass deletes at most.",
        &KV_EXPIRE_BATCH,
        1,
        1_000_000,
    );
    int(
        c"queen.kv_expired_count_max",
        c"Expired-but-present keys a prune pass counts at most.",
        &KV_EXPIRED_COUNT_MAX,
        64,
        i32::MAX,
    );
    int(
        c"queen.kv_usage_every_ms",
        c"Period of the per-namespace usage rollup that quotas read.",
        &KV_USAGE_EVERY_MS,
        10,
        i32::MAX,
    );
    int(
        c"queen.kv_usage_batch",
        c"Keys one statement of the usage rollup reads.",
        &KV_USAGE_BATCH,
        1,
        10_000_000,
    );
    for (name, short, setting, min, max) in [
        (c"queen.kv_batch_max_ops", c"Most operations one KV or locks call takes.", &KV_BATCH_MAX_OPS, 1, 1_000_000),
        (c"queen.kv_key_max_bytes", c"Longest KV key, in bytes.", &KV_KEY_MAX_BYTES, 1, 65_535),
        (c"queen.kv_value_max_bytes", c"Largest KV value (its JSON text), in bytes.", &KV_VALUE_MAX_BYTES, 16, i32::MAX),
        (c"queen.kv_read_max_bytes", c"Bytes of values one getMany or getPrefix answers at most; the rest is marked truncated.", &KV_READ_MAX_BYTES, 1024, i32::MAX),
        (
            c"queen.decompress_max_bytes",
            c"Bytes one request may decompress to, over all its compressed parts (binary push groups, timer payloads).",
            &DECOMPRESS_MAX_BYTES,
            1024,
            i32::MAX,
        ),
        (c"queen.kv_prefix_max_rows", c"Rows one getPrefix answers at most (a larger limit is clamped).", &KV_PREFIX_MAX_ROWS, 1, 1_000_000),
    ] {
        GucRegistry::define_int_guc(name, short, c"", setting, min, max, GucContext::Suset, GucFlags::default());
    }
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
    GucRegistry::define_bool_guc(
        c"queen.partition_cleanup_enabled",
        c"Whether empty, idle partitions are deleted.",
        c"",
        &PARTITION_CLEANUP_ENABLED,
        GucContext::Suset,
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
    GucRegistry::define_string_guc(
        c"queen.database_name",
        c"Database the queen background workers connect to.",
        c"The workers wait quietly until the extension is created there.",
        &DATABASE_NAME,
        GucContext::Postmaster,
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
    GucRegistry::define_bool_guc(
        c"queen.pop_async_commit",
        c"A transaction whose only write is a pop's lease commits without waiting for the WAL flush.",
        c"A crash before the next flush loses that lease and the batch is delivered again, as on lease expiry.",
        &POP_ASYNC_COMMIT,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.ack_async_commit",
        c"A transaction whose only writes are one ack call's commits without waiting for the WAL flush.",
        c"A crash before the next flush loses those acks and their messages are delivered again.",
        &ACK_ASYNC_COMMIT,
        GucContext::Userset,
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
        c"queen.ack_max_items",
        c"Most acknowledgements one ack call takes.",
        c"",
        &ACK_MAX_ITEMS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}
