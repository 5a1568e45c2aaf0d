//! Calls on one shard, or on every shard, through the PL/Proxy functions of
//! schema `queen_remote` (sql/proxy/remote.sql), each statement planned
//! once per backend and kept; a shard's ERROR comes back as the shard
//! raised it (`errors::passed_on`).

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::PgOid;
use pgrx::spi::{OwnedPreparedStatement, Spi, SpiTupleTable};

use crate::errors::{self, Caught};

thread_local! {
    static PLANS: RefCell<HashMap<&'static str, OwnedPreparedStatement>> = RefCell::new(HashMap::new());
}

/// Runs `sql` (a static text, also the key of its kept plan) with `args`
/// and reads its rows with `read`.
///
/// The statement only calls a PL/Proxy function, which writes nothing
/// here, so it runs as a read: the proxy's transaction takes no
/// transaction id for it, and its commit writes no WAL. (A mutating SPI
/// call would take one, and every call through the proxy would then write
/// a commit record and wake the WAL writer.)
fn exec<R>(
    sql: &'static str,
    args: &[DatumWithOid<'_>],
    read: impl FnOnce(SpiTupleTable<'_>) -> R,
) -> R {
    Spi::connect(|client| {
        if !PLANS.with(|p| p.borrow().contains_key(sql)) {
            let types: Vec<PgOid> = args.iter().map(|a| PgOid::from(a.oid())).collect();
            let stmt = client
                .prepare(sql, &types)
                .unwrap_or_else(|e| panic!("preparing {sql}: {e}"))
                .keep();
            PLANS.with(|p| p.borrow_mut().insert(sql, stmt));
        }
        PLANS.with(|p| {
            let plans = p.borrow();
            let stmt = plans.get(sql).expect("kept above");
            read(
                client
                    .select(stmt, None, args)
                    .unwrap_or_else(|e| panic!("{sql}: {e}")),
            )
        })
    })
}

fn first<T: pgrx::FromDatum + pgrx::IntoDatum>(
    sql: &'static str,
    args: &[DatumWithOid<'_>],
) -> Option<T> {
    exec(sql, args, |rows| {
        rows.first()
            .get_one::<T>()
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    })
}

/// A write's answer once every shard it called has answered: a cancel that
/// comes now (the caller's, or a statement timeout) is too late to stop any
/// part of it, and raised after the answer it would tell the caller that
/// nothing was applied. It is dropped; the answer goes out.
pub fn settled<T>(answer: T) -> T {
    // SAFETY: a flag of this backend's own, which only its signal handler
    // sets; clearing it drops a cancel request not yet acted on.
    unsafe {
        pgrx::pg_sys::QueryCancelPending = 0;
    }
    answer
}

/// The caller's `lock_timeout`, which a push or an ack passes to its shard
/// (`lock_wait` of the `queen_remote` writes): the shard's statement then
/// waits on a row lock no longer than the caller's own would.
pub fn lock_wait() -> String {
    // SAFETY: reads a built-in setting by name; the answer is a string
    // PostgreSQL keeps, copied at once.
    unsafe {
        let v = pgrx::pg_sys::GetConfigOptionByName(
            c"lock_timeout".as_ptr(),
            std::ptr::null_mut(),
            false,
        );
        if v.is_null() {
            return "0".to_owned();
        }
        std::ffi::CStr::from_ptr(v).to_string_lossy().into_owned()
    }
}

/// The one value `sql` answers (a call of a `queen_remote` function).
pub fn one<T: pgrx::FromDatum + pgrx::IntoDatum>(
    sql: &'static str,
    args: &[DatumWithOid<'_>],
) -> Option<T> {
    errors::passed_on(|| first(sql, args))
}

/// As [`one`], the ERROR caught: for a request of a fused call, which fails
/// alone.
pub fn try_one<T: pgrx::FromDatum + pgrx::IntoDatum>(
    sql: &'static str,
    args: &[DatumWithOid<'_>],
) -> Result<Option<T>, Caught> {
    errors::catch(|| first(sql, args))
}

/// How a call on one shard is made: [`try_one`] for a request of a fused
/// call, which fails alone, in a subtransaction of its own; [`raising`] for
/// a call made alone, whose ERROR goes up as the shard raised it, with no
/// subtransaction.
pub type Run<T> = fn(&'static str, &[DatumWithOid<'_>]) -> Result<Option<T>, Caught>;

/// As [`one`], in the shape of [`try_one`]: its ERROR is raised, never
/// returned.
pub fn raising<T: pgrx::FromDatum + pgrx::IntoDatum>(
    sql: &'static str,
    args: &[DatumWithOid<'_>],
) -> Result<Option<T>, Caught> {
    Ok(one(sql, args))
}

/// Whether a shard's ERROR says it could not be reached (no connection, or
/// one it ended: shutting down, restarted), as opposed to one it raised.
pub fn unreachable(e: &Caught) -> bool {
    e.sqlstate.starts_with("08") || e.sqlstate.starts_with("57P0")
}

/// `sql` with the parameters `args(shard)` on every shard, one after the
/// other, each in a subtransaction of its own: the answers of the shards
/// that answered, and the first ERROR of one that could not be reached.
/// Any other ERROR is raised, as the shard raised it.
pub fn each_shard<'a, T: pgrx::FromDatum + pgrx::IntoDatum>(
    sql: &'static str,
    args: impl Fn(i32) -> Vec<DatumWithOid<'a>>,
) -> (Vec<T>, Option<Caught>) {
    let mut answers = Vec::new();
    let mut away = None;
    for shard in crate::route::Router::load().all() {
        match try_one::<T>(sql, &args(shard)) {
            Ok(Some(a)) => answers.push(a),
            Ok(None) => {}
            Err(e) if unreachable(&e) => {
                away.get_or_insert(e);
            }
            Err(e) => errors::reraise(&e),
        }
    }
    (answers, away)
}

/// Every value `sql` answers (a `RUN ON ALL` function: one per shard).
pub fn all<T: pgrx::FromDatum + pgrx::IntoDatum>(
    sql: &'static str,
    args: &[DatumWithOid<'_>],
) -> Vec<T> {
    errors::passed_on(|| {
        exec(sql, args, |rows| {
            rows.filter_map(|row| row.get::<T>(1).unwrap_or_else(|e| panic!("{sql}: {e}")))
                .collect()
        })
    })
}

/// The top-level fields of a shard's JSON answer (an object), each kept as
/// its text: a payload in one that a value tree can not hold (a lone
/// surrogate escape, nesting past 128 levels, both of which a push takes)
/// passes through as it came.
pub fn fields<'a>(
    what: &str,
    text: &'a str,
) -> std::collections::BTreeMap<String, &'a serde_json::value::RawValue> {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{what} answered JSON that is not an object: {e}"))
}

/// The elements of a JSON array kept as their texts (see [`fields`]).
pub fn elements<'a>(what: &str, text: &'a str) -> Vec<&'a serde_json::value::RawValue> {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{what} answered JSON that is not an array: {e}"))
}

/// A shard's answer listing rows under one field (`messages`, `traces`):
/// its other fields read, and each row kept as its text (a payload or a
/// trace's data may be any JSON a push took, which a value tree may not
/// hold) with the text fields it sorts by.
pub struct Listed<'a> {
    pub rest: serde_json::Map<String, serde_json::Value>,
    pub rows: Vec<(Vec<String>, &'a serde_json::value::RawValue)>,
}

pub fn listed<'a>(what: &str, text: &'a str, list: &str, keys: &[&str]) -> Listed<'a> {
    let mut out = Listed {
        rest: serde_json::Map::new(),
        rows: Vec::new(),
    };
    for (k, v) in fields(what, text) {
        if k != list {
            out.rest.insert(k, parse(what, v.get()));
            continue;
        }
        for m in elements(what, v.get()) {
            // Only the sort keys are read: a field of a row that is not a
            // string (or absent) sorts first.
            let at: std::collections::BTreeMap<String, &serde_json::value::RawValue> =
                serde_json::from_str(m.get()).unwrap_or_default();
            let sort = keys
                .iter()
                .map(|key| {
                    at.get(*key)
                        .and_then(|r| serde_json::from_str::<String>(r.get()).ok())
                        .unwrap_or_default()
                })
                .collect();
            out.rows.push((sort, m));
        }
    }
    out
}

/// `rest` with the field `list` holding `rows` (kept texts) as one JSON
/// object.
pub fn with_rows(
    mut rest: serde_json::Map<String, serde_json::Value>,
    list: &str,
    rows: Vec<&serde_json::value::RawValue>,
) -> String {
    rest.remove(list);
    let mut text = serde_json::to_string(&rest).expect("a page serializes");
    let rows = serde_json::to_string(&rows).expect("a page serializes");
    text.pop();
    if !rest.is_empty() {
        text.push(',');
    }
    text.push_str(&serde_json::to_string(list).expect("a name serializes"));
    text.push(':');
    text.push_str(&rows);
    text.push('}');
    text
}

/// A JSON answer as a value tree.
pub fn parse(what: &str, text: &str) -> serde_json::Value {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{what} answered JSON that does not parse: {e}"))
}
