//! Settings, as GUCs under the `queen.` prefix with the unit in the name.

use std::ffi::CString;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

/// The database the background workers connect to.
pub static DATABASE_NAME: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"postgres"));
/// Most items one push call takes.
pub static PUSH_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// Largest `batch` one pop may ask for.
pub static POP_MAX_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// Most partitions one pop may claim.
pub static POP_MAX_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(100);
/// Most candidate partitions one pop examines (per claimed partition).
pub static POP_CANDIDATES: GucSetting<i32> = GucSetting::<i32>::new(16);
/// Sidecar rows an ack of an id outside any lease looks back over.
pub static ACK_LOOKBACK_SEGMENTS: GucSetting<i32> = GucSetting::<i32>::new(64);
/// Most acknowledgements one ack call takes.
pub static ACK_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);

pub fn register() {
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
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_max_batch",
        c"Largest batch one pop may ask for.",
        c"",
        &POP_MAX_BATCH,
        1,
        1_000_000,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_max_partitions",
        c"Most partitions one pop may claim.",
        c"",
        &POP_MAX_PARTITIONS,
        1,
        10_000,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_candidates",
        c"Candidate partitions a pop examines for each partition it may claim.",
        c"Candidates that are leased to others are skipped without waiting.",
        &POP_CANDIDATES,
        1,
        10_000,
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
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ack_max_items",
        c"Most acknowledgements one ack call takes.",
        c"",
        &ACK_MAX_ITEMS,
        1,
        1_000_000,
        GucContext::Userset,
        GucFlags::default(),
    );
}
