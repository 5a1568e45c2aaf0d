//! KV requests from JSON: every op is checked before any is evaluated, and
//! a bad one is an ERROR naming its field (SQLSTATE 22023 / 42804 / 54000).

use serde_json::{Number, Value};

use super::ops::{Expiry, Key, Op};
use crate::pg::errors;
use crate::pg::settings;
use crate::wire::json::{Obj, MAX_DURATION_SECONDS};

pub const NS_MAX_BYTES: usize = 128;
/// The namespace the locks and semaphores keep their rows in, written by
/// the locks calls alone.
pub const LOCKS_NS: &str = "queen-locks";

/// A namespace: 1 to 128 bytes of letters, digits and `._:-`.
pub fn check_ns(field: &str, ns: &str) -> String {
    if ns.is_empty() || ns.len() > NS_MAX_BYTES {
        errors::invalid(
            field,
            format!("a namespace is 1 to {NS_MAX_BYTES} bytes, got {}", ns.len()),
        );
    }
    if let Some(c) = ns
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "._:-".contains(*c)))
    {
        errors::invalid(
            field,
            format!("{c:?} is not allowed in a namespace (letters, digits and ._:- are)"),
        );
    }
    ns.to_owned()
}

/// A key: 1 to `queen.kv_key_max_bytes` bytes, no control characters.
pub fn check_key(field: &str, key: &str) -> String {
    let max = settings::kv_key_max_bytes();
    if key.is_empty() {
        errors::invalid(field, "must not be empty");
    }
    if key.len() > max {
        errors::invalid(
            field,
            format!(
                "{} bytes is longer than queen.kv_key_max_bytes ({max})",
                key.len()
            ),
        );
    }
    if key.chars().any(char::is_control) {
        errors::invalid(field, "must not contain control characters");
    }
    key.to_owned()
}

fn number(o: &Obj<'_>, name: &str) -> Option<Number> {
    o.get(name).map(|v| match v {
        Value::Number(n) => n.clone(),
        _ => errors::wrong_type(&o.field(name), "a number"),
    })
}

/// Exactly one of `ttlSeconds` (whole seconds above zero) and `forever: true`.
pub fn expiry(o: &Obj<'_>) -> Expiry {
    let ttl = o.get("ttlSeconds");
    let forever = o.opt_bool("forever").unwrap_or(false);
    match (ttl, forever) {
        (Some(_), true) => errors::invalid(&o.field("ttlSeconds"), "kv_expiry_not_specified: give exactly one of ttlSeconds and forever, not both"),
        (None, false) => errors::invalid(
            &o.field("ttlSeconds"),
            "kv_expiry_not_specified: every write declares its expiry, ttlSeconds (whole seconds) or forever: true",
        ),
        (None, true) => Expiry::Forever,
        (Some(v), false) => match v.as_i64() {
            Some(s) if s > 0 && s <= MAX_DURATION_SECONDS && v.is_i64() => Expiry::Ttl(s),
            _ => errors::invalid(
                &o.field("ttlSeconds"),
                format!("must be a whole number of seconds above zero and at most {MAX_DURATION_SECONDS}, got {v}"),
            ),
        },
    }
}

fn expect(o: &Obj<'_>) -> Option<i64> {
    match o.map.get("expect") {
        None => None,
        Some(Value::Null) => errors::invalid(
            &o.field("expect"),
            "null is not an unconditional write: omit expect, or give 0 for \"must not exist\"",
        ),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(v) if v >= 0 => Some(v),
            _ => errors::invalid(
                &o.field("expect"),
                format!("must be a version (a whole number >= 0), got {n}"),
            ),
        },
        Some(_) => errors::wrong_type(&o.field("expect"), "a whole number"),
    }
}

fn value(o: &Obj<'_>) -> Value {
    let Some(v) = o.map.get("value") else {
        errors::invalid(&o.field("value"), "is required")
    };
    let len = v.to_string().len();
    let max = settings::kv_value_max_bytes();
    if len > max {
        errors::program_limit(
            &o.field("value"),
            format!("{len} bytes of JSON is more than queen.kv_value_max_bytes ({max})"),
        );
    }
    v.clone()
}

/// The op's namespace, checked.
fn ns(o: &Obj<'_>) -> String {
    check_ns(&o.field("ns"), o.req_str("ns"))
}

/// The op's (namespace, key), checked.
fn key(o: &Obj<'_>) -> Key {
    (ns(o), check_key(&o.field("key"), o.req_str("key")))
}

/// The op's (namespace, key), checked, for an op that writes: not in the
/// locks' namespace.
fn written(o: &Obj<'_>) -> Key {
    // The locks' namespace is written by the locks calls alone (a plain
    // write could take or drop another's lock); reads and checks (a
    // transaction's guard of a lock) stay open.
    let k = key(o);
    if k.0 == LOCKS_NS {
        errors::invalid(
            &o.field("ns"),
            format!(
                "{} is written only by the locks calls (queen.locks)",
                LOCKS_NS
            ),
        );
    }
    k
}

/// One op; `in_transaction` refuses the ones whose cost the caller cannot
/// bound (getPrefix).
pub fn op(v: &Value, path: &str, in_transaction: bool) -> Op {
    let o = Obj::new(v, path);
    let required = o.opt_bool("required").unwrap_or(false);
    match o.req_str("op") {
        "get" => Op::Get { key: key(&o) },
        "getMany" => get_many(&o),
        "getPrefix" => get_prefix(&o, in_transaction),
        "put" => Op::Put { key: written(&o), value: value(&o), expiry: expiry(&o), expect: expect(&o), required },
        "putIfAbsent" => {
            if expect(&o).is_some_and(|e| e != 0) {
                errors::invalid(&o.field("expect"), "putIfAbsent is put with expect 0; another expect contradicts it");
            }
            Op::Put { key: written(&o), value: value(&o), expiry: expiry(&o), expect: Some(0), required }
        }
        "delete" => {
            let e = expect(&o);
            if e == Some(0) {
                errors::invalid(&o.field("expect"), "a delete's expect is the version to delete (above 0)");
            }
            Op::Delete { key: written(&o), expect: e, required }
        }
        "check" => {
            let e = expect(&o).unwrap_or_else(|| errors::invalid(&o.field("expect"), "check needs expect: the version the key must be at, or 0 for absent"));
            Op::Check { key: key(&o), expect: e, required }
        }
        "incr" => incr(&o, required),
        other => errors::invalid(&o.field("op"), format!("{other:?} is not one of get, getMany, getPrefix, put, putIfAbsent, delete, check, incr")),
    }
}

/// A getMany: a namespace and a non-empty list of keys.
fn get_many(o: &Obj<'_>) -> Op {
    let keys = o
        .opt_array("keys")
        .unwrap_or_else(|| errors::invalid(&o.field("keys"), "is required"));
    if keys.is_empty() {
        errors::invalid(&o.field("keys"), "must not be empty");
    }
    let keys = keys
        .iter()
        .enumerate()
        .map(|(i, k)| match k {
            Value::String(s) => check_key(&format!("{}[{i}]", o.field("keys")), s),
            _ => errors::wrong_type(&format!("{}[{i}]", o.field("keys")), "a string"),
        })
        .collect();
    Op::GetMany { ns: ns(o), keys }
}

/// A getPrefix: a page of the keys that start with a non-empty prefix;
/// `in_transaction` refuses it.
fn get_prefix(o: &Obj<'_>, in_transaction: bool) -> Op {
    if in_transaction {
        errors::invalid(&o.field("op"), "getPrefix is not allowed inside a transaction: its cost is not bounded by the caller; use getMany with explicit keys");
    }
    let prefix = o.opt_str("prefix").filter(|p| !p.is_empty());
    let prefix = prefix.unwrap_or_else(|| errors::invalid(&o.field("prefix"), "kv_prefix_required: a non-empty prefix is required; a namespace is not a table to enumerate"));
    let limit = o.opt_i64("limit");
    if limit.is_some_and(|l| l < 1) {
        errors::invalid(&o.field("limit"), "must be at least 1");
    }
    Op::GetPrefix {
        ns: ns(o),
        prefix: check_key(&o.field("prefix"), prefix),
        after: o.opt_str("after").map(|a| check_key(&o.field("after"), a)),
        limit,
        keys_only: o.opt_bool("keysOnly").unwrap_or(false),
    }
}

/// An incr: a delta (1 when absent) within optional bounds, and an expiry.
fn incr(o: &Obj<'_>, required: bool) -> Op {
    if o.map.contains_key("expect") {
        errors::invalid(
            &o.field("expect"),
            "incr takes no expect: it is the atomic way out of a compare-and-set loop",
        );
    }
    Op::Incr {
        key: written(o),
        delta: number(o, "delta").unwrap_or_else(|| 1.into()),
        min: number(o, "min"),
        max: number(o, "max"),
        expiry: expiry(o),
        required,
    }
}

/// A list of ops, bounded by `queen.kv_batch_max_ops`.
pub fn ops(list: &[Value], field: &str, in_transaction: bool) -> Vec<Op> {
    let max = settings::kv_batch_max_ops();
    if list.len() > max {
        errors::program_limit(
            field,
            format!(
                "{} operations is more than queen.kv_batch_max_ops ({max})",
                list.len()
            ),
        );
    }
    list.iter()
        .enumerate()
        .map(|(i, v)| op(v, &format!("{field}[{i}]"), in_transaction))
        .collect()
}
