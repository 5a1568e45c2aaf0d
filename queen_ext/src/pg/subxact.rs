//! Subtransactions: running a piece of work so that an ERROR in it undoes
//! only that piece and comes back as a value, with its SQLSTATE, message and
//! detail, while the caller's transaction carries on.

use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::errors::sqlstate_text;

/// An ERROR caught by [`in_subtransaction`] or [`catch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caught {
    pub sqlstate: String,
    pub message: String,
    pub detail: Option<String>,
}

impl Caught {
    fn of(e: &pg_sys::panic::CaughtError) -> Caught {
        let (code, message, detail) = match e {
            pg_sys::panic::CaughtError::PostgresError(r) => {
                (r.sql_error_code(), r.message(), r.detail())
            }
            pg_sys::panic::CaughtError::ErrorReport(r)
            | pg_sys::panic::CaughtError::RustPanic { ereport: r, .. } => {
                (r.sql_error_code(), r.message(), r.detail())
            }
        };
        Caught {
            sqlstate: sqlstate_text(code),
            message: message.to_owned(),
            detail: detail.map(str::to_owned),
        }
    }
}

/// Runs `f` in a subtransaction of the current transaction; an ERROR rolls
/// back only what `f` did and comes back as Err. The caller's memory context
/// and resource owner are back in place either way.
pub fn in_subtransaction<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
    let (context, owner) = unsafe { (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner) };
    unsafe {
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(context);
    }
    let result = PgTryBuilder::new(AssertUnwindSafe(|| Ok(f())))
        .catch_others(|e| Err(Caught::of(&e)))
        .execute();
    unsafe {
        pg_sys::MemoryContextSwitchTo(context);
        if result.is_ok() {
            pg_sys::ReleaseCurrentSubTransaction();
        } else {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
        }
        pg_sys::MemoryContextSwitchTo(context);
        pg_sys::CurrentResourceOwner = owner;
    }
    result
}

/// Runs `f`, which touches no database state (parsing, checking), and
/// catches the ERROR it raises; no subtransaction is needed for that.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
    PgTryBuilder::new(AssertUnwindSafe(|| Ok(f())))
        .catch_others(|e| Err(Caught::of(&e)))
        .execute()
}
