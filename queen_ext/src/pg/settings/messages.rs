//! The message and trace readers.

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

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

pub(super) fn register_messages() {
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
