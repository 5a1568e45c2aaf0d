//! The commit of a transaction that only took a lease.
//!
//! A pop's writes are soft state: a lease, and the cursor row that holds it.
//! When a pop is all that its transaction wrote, the commit does not wait
//! for the WAL to reach disk (what `synchronous_commit = off` does, for this
//! one commit). A crash before the next flush loses the lease (and the
//! delivery attempt it counted), and the batch is handed out again, as when
//! a lease expires; nothing else is at stake, because any later durable
//! commit (the ack of that batch, a push) flushes the pop's WAL with its
//! own. The test is exact: the transaction had no transaction id when the
//! pop began (nothing written before it), and has written no WAL since the
//! pop ended (nothing written after it).
//! A consumer's pop+ack then costs one flush instead of two.
//! `queen.pop_async_commit = off` keeps every pop's commit synchronous.

use std::cell::Cell;

use pgrx::pg_sys;

use crate::guc;

thread_local! {
    /// The transaction id and WAL end when a pop that was its transaction's
    /// first writer ended.
    static LEASE_ONLY: Cell<Option<(pg_sys::TransactionId, pg_sys::XLogRecPtr)>> = const { Cell::new(None) };
    /// `synchronous_commit` as it was before this commit relaxed it.
    static SAVED: Cell<Option<i32>> = const { Cell::new(None) };
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
}

/// True while the current transaction has written nothing (it has no
/// transaction id: every WAL-logged write of user data takes one).
pub fn nothing_written() -> bool {
    unsafe { pg_sys::GetTopTransactionIdIfAny() == pg_sys::InvalidTransactionId }
}

/// Called when a pop that began with [`nothing_written`] has written its
/// lease: the commit may skip the flush if nothing is written after it.
pub fn lease_written() {
    if !guc::POP_ASYNC_COMMIT.get() {
        return;
    }
    if !REGISTERED.get() {
        unsafe { pg_sys::RegisterXactCallback(Some(on_xact_event), std::ptr::null_mut()) };
        REGISTERED.set(true);
    }
    let (xid, end) = unsafe { (pg_sys::GetTopTransactionIdIfAny(), pg_sys::XactLastRecEnd) };
    LEASE_ONLY.set(Some((xid, end)));
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_xact_event(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    use pg_sys::XactEvent::*;
    match event {
        XACT_EVENT_PRE_COMMIT => {
            let Some((xid, end)) = LEASE_ONLY.take() else { return };
            let (now_xid, now_end) = unsafe { (pg_sys::GetTopTransactionIdIfAny(), pg_sys::XactLastRecEnd) };
            let level = unsafe { pg_sys::synchronous_commit };
            if now_xid == xid && now_end == end && level > pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_OFF as i32 {
                SAVED.set(Some(level));
                unsafe { pg_sys::synchronous_commit = pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_OFF as i32 };
                pgrx::debug1!("queen: a lease-only transaction commits without waiting for the WAL flush");
            }
        }
        XACT_EVENT_PRE_PREPARE => LEASE_ONLY.set(None),
        XACT_EVENT_COMMIT | XACT_EVENT_ABORT | XACT_EVENT_PREPARE | XACT_EVENT_PARALLEL_COMMIT | XACT_EVENT_PARALLEL_ABORT => {
            LEASE_ONLY.set(None);
            if let Some(level) = SAVED.take() {
                unsafe { pg_sys::synchronous_commit = level };
            }
        }
        _ => {}
    }
}
