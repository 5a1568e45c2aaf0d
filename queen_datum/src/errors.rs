//! ERRORs as values, shared by both extensions: an ERROR caught with its
//! SQLSTATE, message, detail and hint; raised again as it was; and the
//! subtransaction that lets a piece of work fail alone while the caller's
//! transaction carries on.

use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::pg_sys::panic::{CaughtError, ErrorReport};
use pgrx::prelude::*;

/// An ERROR caught on its way up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caught {
    pub sqlstate: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl Caught {
    /// An ERROR of `sqlstate` (five characters) with `message` alone.
    pub fn new(sqlstate: &str, message: impl std::fmt::Display) -> Caught {
        Caught {
            sqlstate: sqlstate.to_owned(),
            message: message.to_string(),
            detail: None,
            hint: None,
        }
    }

    /// What a `PgTryBuilder` caught.
    pub fn of(e: &CaughtError) -> Caught {
        let r = match e {
            CaughtError::PostgresError(r) => r,
            CaughtError::ErrorReport(r) | CaughtError::RustPanic { ereport: r, .. } => r,
        };
        Caught {
            sqlstate: sqlstate_text(r.sql_error_code()),
            message: r.message().to_owned(),
            detail: r.detail().map(str::to_owned),
            hint: r.hint().map(str::to_owned),
        }
    }

    /// Raises the ERROR again, as it was caught; `origin` names the
    /// extension in the server log.
    pub fn raise(&self, origin: &'static str) -> ! {
        let mut report = ErrorReport::new(
            pgrx::PgSqlErrorCode::from(sqlstate_code(&self.sqlstate)),
            self.message.clone(),
            origin,
        );
        if let Some(d) = &self.detail {
            report = report.set_detail(d.clone());
        }
        if let Some(h) = &self.hint {
            report = report.set_hint(h.clone());
        }
        report.report(PgLogLevel::ERROR);
        unreachable!("an ERROR does not return")
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
    let result = catch(f);
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

/// PostgreSQL's packed form of a five-character SQLSTATE.
pub fn sqlstate_code(sqlstate: &str) -> i32 {
    sqlstate.bytes().take(5).enumerate().fold(0, |acc, (i, b)| {
        acc | (((b.wrapping_sub(b'0')) & 0x3F) as i32) << (6 * i)
    })
}

/// The five-character SQLSTATE of a PostgreSQL error code.
pub fn sqlstate_text(code: pg_sys::errcodes::PgSqlErrorCode) -> String {
    let v = code as isize;
    (0..5)
        .map(|i| (((v >> (6 * i)) & 0x3F) as u8 + b'0') as char)
        .collect()
}
