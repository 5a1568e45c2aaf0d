//! What every background worker shares: connecting with the pinned
//! search_path, running a unit of work in a transaction of its own, noticing
//! SIGTERM, sleeping on the latch, and exiting so as to be restarted.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use pgrx::bgworkers::BackgroundWorker;
use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::pg::errors::describe;
use crate::pg::settings;

/// Runs `f` in a transaction of its own; an ERROR rolls it back and comes
/// back as Err.
pub fn in_own_transaction<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    in_own_transaction_coded(f).map_err(|(_, message)| message)
}

/// As `in_own_transaction`, the error answered with its SQLSTATE.
pub fn in_own_transaction_coded<R>(f: impl FnOnce() -> R) -> Result<R, (String, String)> {
    unsafe {
        pg_sys::SetCurrentStatementStartTimestamp();
        pg_sys::StartTransactionCommand();
        pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
    }
    let result = PgTryBuilder::new(AssertUnwindSafe(|| Ok(f())))
        .catch_others(|e| Err(describe(&e)))
        .execute();
    match result {
        Ok(v) => {
            unsafe {
                pg_sys::PopActiveSnapshot();
                pg_sys::CommitTransactionCommand();
            }
            Ok(v)
        }
        Err(e) => {
            unsafe { pg_sys::AbortCurrentTransaction() };
            Err(e)
        }
    }
}

/// Set once SIGTERM has been seen. pgrx's `sigterm_received` clears its flag
/// when read, so every check goes through here and the answer sticks.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this worker was asked to stop.
pub fn stopping() -> bool {
    use std::sync::atomic::Ordering;
    if BackgroundWorker::sigterm_received() {
        STOPPING.store(true, Ordering::SeqCst);
    }
    STOPPING.load(Ordering::SeqCst)
}

/// Sleeps on the latch for at most `d`; false when the worker must stop.
pub fn wait(d: Duration) -> bool {
    if !BackgroundWorker::wait_latch(Some(d)) {
        STOPPING.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    !stopping()
}

/// The search_path every worker session runs with: the catalogue only.
/// Every statement names queen's objects by schema, so nothing a role
/// placed in a schema on the default path (a function or an operator in
/// `public`) is ever resolved inside a worker, which runs as a superuser.
pub const PINNED_SEARCH_PATH: &std::ffi::CStr = c"pg_catalog, pg_temp";

/// Connects a worker to the workers' database with the pinned search_path,
/// at READ COMMITTED whatever `default_transaction_isolation` says (the
/// retention step needs it).
pub fn connect() {
    BackgroundWorker::connect_worker_to_spi(Some(&settings::database_name()), None);
    for (name, value) in [
        (c"search_path", PINNED_SEARCH_PATH),
        (c"default_transaction_isolation", c"read committed"),
    ] {
        unsafe {
            pg_sys::SetConfigOption(
                name.as_ptr(),
                value.as_ptr(),
                pg_sys::GucContext::PGC_SUSET,
                pg_sys::GucSource::PGC_S_OVERRIDE,
            );
        }
    }
}

/// Whether the extension is created in the workers' database.
pub fn extension_present() -> bool {
    in_own_transaction(|| {
        Spi::get_one::<bool>("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'queen')")
            .ok()
            .flatten()
            .unwrap_or(false)
    })
    .unwrap_or(false)
}

/// Ends a static worker asked to stop. The postmaster restarts a worker
/// that exits with 1 (after its restart time), never one that exits with 0:
/// a worker stopped by `pg_terminate_backend` must come back. At a shutdown
/// the postmaster restarts nothing either way.
// PostgreSQL 18's bindings do not mark proc_exit as not returning.
#[allow(unreachable_code)]
pub fn exit_to_be_restarted() -> ! {
    unsafe { pg_sys::proc_exit(1) };
    unreachable!("proc_exit does not return")
}
