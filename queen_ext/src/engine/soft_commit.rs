//! The commit of a transaction that only moved consumer state, or only
//! deleted what retention may delete.
//!
//! A pop's lease and an ack's cursor move are soft state: losing one
//! redelivers messages, it never loses one. When a pop, or an ack, is all
//! that its transaction wrote, the commit does not wait for the WAL to reach
//! disk (what `synchronous_commit = off` does, for this one commit). A crash
//! before the next flush (the WAL writer's, within three
//! `wal_writer_delay`s, or any later durable commit's, which flushes
//! everything before it) loses that write: a lost lease (and the delivery
//! attempt it counted) hands its batch out again, as when a lease expires;
//! a lost ack leaves its messages unacked, and they are delivered again.
//!
//! A retention step (the segments or sidecar rows of one partition, its
//! watermark and its audit row, all in its transaction) is the same: a
//! crash that loses it leaves those rows in place, with the watermark that
//! says they are there, and the next cycle deletes them again. Its commit
//! not waiting also keeps the step's WAL off the flush a push that commits
//! next would otherwise wait behind.
//!
//! Nothing that depends on a relaxed write outlives it: the WAL reaches
//! disk in order, so a delete that retention made because of an ack is on
//! disk only if the ack is. The test is exact: the transaction had no
//! transaction id when the call began (nothing written before it), and has
//! written no WAL since the call ended (nothing written after it). A
//! consumer's pop + ack then waits for no flush at all.
//! `queen.pop_async_commit = off`, `queen.ack_async_commit = off` and
//! `queen.retention_async_commit = off` keep those commits synchronous.

use std::cell::Cell;

use pgrx::pg_sys;

use crate::pg::settings;

/// What a relaxed transaction wrote.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Soft {
    /// A pop's lease.
    Lease,
    /// An ack's cursor moves (and what a failed or dead-lettered message
    /// leaves behind).
    Ack,
    /// A retention step's deletes, watermark move and audit row.
    Retention,
}

impl Soft {
    fn enabled(self) -> bool {
        match self {
            Soft::Lease => settings::pop_async_commit(),
            Soft::Ack => settings::ack_async_commit(),
            Soft::Retention => settings::retention_async_commit(),
        }
    }

    /// The transaction it leaves, as the server log names it.
    fn transaction(self) -> &'static str {
        match self {
            Soft::Lease => "a lease-only transaction",
            Soft::Ack => "an ack-only transaction",
            Soft::Retention => "a retention step's transaction",
        }
    }
}

thread_local! {
    /// What the call wrote, and the transaction id and WAL end when the call
    /// that was its transaction's first writer ended.
    static SOFT_ONLY: Cell<Option<(Soft, pg_sys::TransactionId, pg_sys::XLogRecPtr)>> = const { Cell::new(None) };
    /// `synchronous_commit` as it was before this commit relaxed it.
    static SAVED: Cell<Option<i32>> = const { Cell::new(None) };
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
}

/// True while the current transaction has written nothing (it has no
/// transaction id: every WAL-logged write of user data takes one).
pub fn nothing_written() -> bool {
    unsafe { pg_sys::GetTopTransactionIdIfAny() == pg_sys::InvalidTransactionId }
}

/// Runs `f`, which writes `what`: when that is the first thing its
/// transaction writes, the commit may skip the flush if nothing is written
/// after it.
pub fn first_write<R>(what: Soft, f: impl FnOnce() -> R) -> R {
    let first = nothing_written();
    let out = f();
    if first && !nothing_written() {
        soft_written(what);
    }
    out
}

/// Called when a call that began with [`nothing_written`] has written its
/// soft state: the commit may skip the flush if nothing is written after it.
pub fn soft_written(what: Soft) {
    if !what.enabled() {
        return;
    }
    if !REGISTERED.get() {
        unsafe { pg_sys::RegisterXactCallback(Some(on_xact_event), std::ptr::null_mut()) };
        REGISTERED.set(true);
    }
    let (xid, end) = unsafe { (pg_sys::GetTopTransactionIdIfAny(), pg_sys::XactLastRecEnd) };
    SOFT_ONLY.set(Some((what, xid, end)));
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_xact_event(
    event: pg_sys::XactEvent::Type,
    _arg: *mut std::ffi::c_void,
) {
    use pg_sys::XactEvent::*;
    match event {
        XACT_EVENT_PRE_COMMIT => {
            let Some((what, xid, end)) = SOFT_ONLY.take() else {
                return;
            };
            let (now_xid, now_end) =
                unsafe { (pg_sys::GetTopTransactionIdIfAny(), pg_sys::XactLastRecEnd) };
            let level = unsafe { pg_sys::synchronous_commit };
            if now_xid == xid
                && now_end == end
                && level > pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_OFF as i32
            {
                SAVED.set(Some(level));
                unsafe {
                    pg_sys::synchronous_commit =
                        pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_OFF as i32
                };
                pgrx::debug1!(
                    "queen: {} commits without waiting for the WAL flush",
                    what.transaction()
                );
            }
        }
        XACT_EVENT_PRE_PREPARE => SOFT_ONLY.set(None),
        XACT_EVENT_COMMIT
        | XACT_EVENT_ABORT
        | XACT_EVENT_PREPARE
        | XACT_EVENT_PARALLEL_COMMIT
        | XACT_EVENT_PARALLEL_ABORT => {
            SOFT_ONLY.set(None);
            if let Some(level) = SAVED.take() {
                unsafe { pg_sys::synchronous_commit = level };
            }
        }
        _ => {}
    }
}
