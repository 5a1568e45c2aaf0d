//! ERRORs with a fitting SQLSTATE, and the ERRORs of a shard passed on as
//! the shard raised them. The caught ERROR and the subtransaction are the
//! shard extension's own (`queen_datum::errors`).

use std::panic::AssertUnwindSafe;

use pgrx::prelude::*;
pub use queen_datum::errors::Caught;

/// The extension the ERRORs raised here are logged under.
const ORIGIN: &str = "queen_proxy";

/// Raises an ERROR with the five-character `sqlstate`.
pub fn raise(sqlstate: &str, msg: impl std::fmt::Display) -> ! {
    Caught::new(sqlstate, msg).raise(ORIGIN)
}

/// Raises `e` again, as it was caught.
pub fn reraise(e: &Caught) -> ! {
    e.raise(ORIGIN)
}

/// The answer of one request of a fused call that failed alone, in the
/// shape the shard answers it (`{"sqlstate","error","detail"}`).
pub fn answer_json(e: &Caught) -> serde_json::Value {
    serde_json::json!({
        "sqlstate": e.sqlstate,
        "error": e.message,
        "detail": e.detail,
    })
}

/// An ERROR caught on its way up (a shard's, or PL/Proxy's own) as the
/// shard raised it: PL/Proxy's prefixes taken off the message
/// (`f(n): [db] REMOTE ERROR: `), the detail and the hint
/// (`Remote detail: `). An ERROR of PL/Proxy itself that is not a shard's
/// (it could not reach the shard) becomes 08006, naming the shard's
/// database; a cancel of this backend while a shard ran the call becomes
/// 08007 (transaction resolution unknown).
fn as_the_shard_raised_it(mut e: Caught) -> Caught {
    const REMOTE: &str = "REMOTE ERROR: ";
    if let Some(at) = e.message.find(REMOTE) {
        e.message = e.message[at + REMOTE.len()..].to_owned();
        e.detail = e.detail.map(|d| strip(d, "Remote detail: "));
        e.hint = e.hint.map(|h| strip(h, "Remote hint: "));
    } else if e.sqlstate == "57014" {
        // This backend was canceled (its caller's cancel, its statement
        // timeout) while a shard ran the call: the shard commits its part
        // on its own, and it may have done so before the cancel reached it.
        e.detail = Some(e.message.clone());
        e.message =
            "canceled while a shard ran the call: it may have been applied there".to_owned();
        e.sqlstate = "08007".to_owned();
    } else if e.sqlstate == "XX000" && e.message.starts_with("PL/Proxy function") {
        let shard = e
            .message
            .split_once('[')
            .and_then(|(_, rest)| rest.split_once(']'))
            .map_or("?", |(db, _)| db)
            .to_owned();
        e.detail = Some(e.message.clone());
        e.message = format!("shard {shard} is unavailable");
        e.sqlstate = "08006".to_owned();
    }
    e
}

fn strip(text: String, prefix: &str) -> String {
    match text.strip_prefix(prefix) {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// Runs `f`, catching the ERROR it raises (as the shard raised it), inside
/// a subtransaction so that the caller's transaction carries on.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
    queen_datum::errors::in_subtransaction(f).map_err(as_the_shard_raised_it)
}

/// Runs `f`; an ERROR it raises is raised again as the shard raised it.
pub fn passed_on<R>(f: impl FnOnce() -> R) -> R {
    PgTryBuilder::new(AssertUnwindSafe(f))
        .catch_others(|e| reraise(&as_the_shard_raised_it(Caught::of(&e))))
        .execute()
}
