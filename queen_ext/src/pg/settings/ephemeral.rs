//! Ephemeral queues.

use std::ffi::CString;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

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

pub(super) fn register_ephemeral() {
    register_ephemeral_options();
    register_ephemeral_bounds();
}

/// The defaults of an ephemeral queue's options.
fn register_ephemeral_options() {
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
    GucRegistry::define_string_guc(
        c"queen.ephemeral_policy",
        c"Default policy of an ephemeral queue: reject or dropOldest.",
        c"",
        &EPHEMERAL_POLICY,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The bounds of the ephemeral calls and of their cleanup.
fn register_ephemeral_bounds() {
    register_ephemeral_calls();
    register_ephemeral_cleanup();
}

/// The bounds of one ephemeral call.
fn register_ephemeral_calls() {
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
        c"queen.ephemeral_list_max",
        c"Rows one ephemeral listing answers at most.",
        c"",
        &EPHEMERAL_LIST_MAX,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The cleanup of ephemeral queues and the compaction of fired timers.
fn register_ephemeral_cleanup() {
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
