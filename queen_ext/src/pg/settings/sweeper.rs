//! The timer sweepers.

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

use super::MAX_SWEEPERS;

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

pub(super) fn register_sweeper() {
    register_sweeper_workers();
    register_sweeper_bounds();
}

/// The sweepers and their switches.
fn register_sweeper_workers() {
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

/// The bounds of one sweep.
fn register_sweeper_bounds() {
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
