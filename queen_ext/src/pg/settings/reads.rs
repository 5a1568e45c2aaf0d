//! Reads by offset and the resource listings.

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

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

pub(super) fn register_reads() {
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
