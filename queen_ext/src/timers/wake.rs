//! The local wake. Scheduling a timer earlier than the nearest delivery the
//! sweepers already know of sets their latches after the transaction
//! commits, never before (a rollback wakes nothing), and at most once per
//! transaction. A million timers for next week produce one wake. The wake
//! is losable by design: `queen.sweeper_max_sleep_ms` bounds how late any
//! schedule is noticed without it.

use std::cell::Cell;
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

use pgrx::callbacks::PgXactCallbackEvent;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::PgAtomic;

use crate::pg::settings::MAX_SWEEPERS;

pub struct Wake {
    /// The earliest delivery instant (µs since the Unix epoch) the sweepers
    /// were told of; i64::MAX when they know of none.
    nearest_us: AtomicI64,
    /// The PGPROC number + 1 of each running sweeper (0: none).
    procnos: [AtomicI32; MAX_SWEEPERS],
}

impl Default for Wake {
    fn default() -> Wake {
        Wake {
            nearest_us: AtomicI64::new(i64::MAX),
            procnos: Default::default(),
        }
    }
}

unsafe impl PGRXSharedMemory for Wake {}

static WAKE: PgAtomic<Wake> = unsafe { PgAtomic::new(c"queen_sweeper_wake") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(WAKE);
}

fn shared() -> Option<&'static Wake> {
    crate::pg::shmem::preloaded().then(|| WAKE.get())
}

/// A sweeper announces itself, so committers can set its latch.
pub fn register_sweeper(slot: usize) {
    if let (Some(w), true) = (shared(), slot < MAX_SWEEPERS) {
        // Its place in the array of every PGPROC (what PostgreSQL 15 and 16
        // keep as `pgprocno`; 17 on compute it the same way).
        let procno = unsafe { pg_sys::MyProc.offset_from((*pg_sys::ProcGlobal).allProcs) as i32 };
        w.procnos[slot].store(procno + 1, Ordering::SeqCst);
    }
}

/// A sweeper records what its probe saw: the next delivery instant, or none.
pub fn promised(next_us: Option<i64>) {
    if let Some(w) = shared() {
        w.nearest_us
            .store(next_us.unwrap_or(i64::MAX), Ordering::SeqCst);
    }
}

thread_local! {
    /// The earliest instant scheduled by the current transaction, when a
    /// commit callback is already registered for it.
    static PENDING: Cell<Option<i64>> = const { Cell::new(None) };
}

/// Called for every scheduled timer: arranges one wake at commit when the
/// instant is earlier than what the sweepers know of.
pub fn scheduled(deliver_us: i64) {
    let Some(w) = shared() else { return };
    if deliver_us >= w.nearest_us.load(Ordering::SeqCst) {
        return;
    }
    let already = PENDING.with(|p| {
        let was = p.get();
        p.set(Some(was.map_or(deliver_us, |v| v.min(deliver_us))));
        was.is_some()
    });
    if already {
        return;
    }
    pgrx::register_xact_callback(PgXactCallbackEvent::Commit, || {
        if let Some(at) = PENDING.with(|p| p.take()) {
            wake(at);
        }
    });
    pgrx::register_xact_callback(PgXactCallbackEvent::Abort, || {
        PENDING.with(|p| p.set(None));
    });
}

/// Sets every sweeper's latch once the transaction commits: a resumed fire
/// is acted on at once, not after the sweepers' longest sleep.
pub fn at_commit() {
    if shared().is_none() {
        return;
    }
    pgrx::register_xact_callback(PgXactCallbackEvent::Commit, || {
        wake(crate::pg::time::wall_clock_us())
    });
}

/// Lowers the promise and sets every sweeper's latch. Runs after commit: it
/// must not fail, and does nothing that could.
fn wake(at: i64) {
    let Some(w) = shared() else { return };
    w.nearest_us.fetch_min(at, Ordering::SeqCst);
    for slot in &w.procnos {
        let procno = slot.load(Ordering::SeqCst);
        if procno > 0 {
            unsafe {
                let proc_ = (*pg_sys::ProcGlobal).allProcs.add((procno - 1) as usize);
                pg_sys::SetLatch(&raw mut (*proc_).procLatch);
            }
        }
    }
}
