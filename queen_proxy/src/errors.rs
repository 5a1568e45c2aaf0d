//! ERRORs with a fitting SQLSTATE, and the ERRORs of a shard passed on as
//! the shard raised them.

use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::pg_sys::panic::{CaughtError, ErrorReport};
use pgrx::prelude::*;

/// Raises an ERROR with the five-character `sqlstate`.
pub fn raise(sqlstate: &str, msg: impl std::fmt::Display) -> ! {
    Caught {
        sqlstate: sqlstate.to_owned(),
        message: msg.to_string(),
        detail: None,
        hint: None,
    }
    .raise()
}

/// An ERROR caught on its way up: a shard's, or PL/Proxy's own.
#[derive(Debug, Clone)]
pub struct Caught {
    pub sqlstate: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl Caught {
    fn of(e: &CaughtError) -> Caught {
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
        .unwrapped()
    }

    /// The ERROR as the shard raised it: PL/Proxy's prefixes taken off the
    /// message (`f(n): [db] REMOTE ERROR: `), the detail and the hint
    /// (`Remote detail: `). An ERROR of PL/Proxy itself that is not a
    /// shard's (it could not reach the shard) becomes 08006, naming the
    /// shard's database.
    fn unwrapped(mut self) -> Caught {
        const REMOTE: &str = "REMOTE ERROR: ";
        if let Some(at) = self.message.find(REMOTE) {
            self.message = self.message[at + REMOTE.len()..].to_owned();
            self.detail = self.detail.map(|d| strip(d, "Remote detail: "));
            self.hint = self.hint.map(|h| strip(h, "Remote hint: "));
        } else if self.sqlstate == "XX000" && self.message.starts_with("PL/Proxy function") {
            let shard = self
                .message
                .split_once('[')
                .and_then(|(_, rest)| rest.split_once(']'))
                .map_or("?", |(db, _)| db)
                .to_owned();
            self.detail = Some(self.message.clone());
            self.message = format!("shard {shard} is unavailable");
            self.sqlstate = "08006".to_owned();
        }
        self
    }

    pub fn raise(&self) -> ! {
        let mut report = ErrorReport::new(
            pgrx::PgSqlErrorCode::from(sqlstate_code(&self.sqlstate)),
            self.message.clone(),
            "queen_proxy",
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

    /// The answer of one request of a fused call that failed alone, in the
    /// shape the shard answers it (`{"sqlstate","error","detail"}`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "sqlstate": self.sqlstate,
            "error": self.message,
            "detail": self.detail,
        })
    }
}

fn strip(text: String, prefix: &str) -> String {
    match text.strip_prefix(prefix) {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// Runs `f`, catching the ERROR it raises, inside a subtransaction so that
/// the caller's transaction carries on.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
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

/// Runs `f`; an ERROR it raises is raised again as the shard raised it.
pub fn passed_on<R>(f: impl FnOnce() -> R) -> R {
    PgTryBuilder::new(AssertUnwindSafe(f))
        .catch_others(|e| Caught::of(&e).raise())
        .execute()
}

/// PostgreSQL's packed form of a five-character SQLSTATE.
fn sqlstate_code(sqlstate: &str) -> i32 {
    sqlstate.bytes().take(5).enumerate().fold(0, |acc, (i, b)| {
        acc | (((b.wrapping_sub(b'0')) & 0x3F) as i32) << (6 * i)
    })
}

/// The five-character SQLSTATE of a PostgreSQL error code.
fn sqlstate_text(code: pg_sys::errcodes::PgSqlErrorCode) -> String {
    let v = code as isize;
    (0..5)
        .map(|i| (((v >> (6 * i)) & 0x3F) as u8 + b'0') as char)
        .collect()
}
