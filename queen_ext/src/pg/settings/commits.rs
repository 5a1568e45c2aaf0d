//! Commits that do not wait for the WAL flush (see `engine::soft_commit`).

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

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

pub(super) fn register_commits() {
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
