//! The key-value store and locks.

use std::time::Duration;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

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

pub(super) fn register_kv() {
    register_kv_upkeep();
    register_kv_bounds();
}

/// The expiry and the usage rollup.
fn register_kv_upkeep() {
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
}

/// The bounds of one KV call.
fn register_kv_bounds() {
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
