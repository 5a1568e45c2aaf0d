//! Key/value state with a mandatory expiry, and locks built on it.
//!
//! `queen.kv(body)` takes Queen's KV body (`{"operations": [...]}`) and
//! answers `{"results": [...]}`, index-aligned. The scalar functions are
//! conveniences over the same ops. Usage and quota are per namespace.

use crate::wire::datum::ArgValue;
use pgrx::prelude::*;
use serde_json::{json, Value};

use crate::kv::{answer, parse, store, usage};
use crate::pg::errors;
use crate::pg::spi;
use crate::reads;
use crate::wire::datum::{JsonOut, JsonbArg};

pub(super) fn body_ops(body: Option<JsonbArg>) -> Vec<Value> {
    let text = body
        .map(|JsonbArg(t)| t)
        .unwrap_or_else(|| errors::invalid("operations", "is required"));
    match crate::wire::json::parse_value("operations", &text) {
        Value::Array(a) => a,
        v @ Value::Object(_) => match v.get("operations") {
            Some(Value::Array(a)) => a.clone(),
            Some(_) => errors::wrong_type("operations", "an array"),
            None => errors::invalid("operations", "is required"),
        },
        _ => errors::wrong_type("body", "an object with operations"),
    }
}

/// KV operations in one transaction, in order: get, getMany, getPrefix,
/// put, putIfAbsent, delete, check, incr.
#[pg_extern]
fn kv(body: Option<JsonbArg>) -> JsonOut {
    let ops = parse::ops(&body_ops(body), "operations", false);
    JsonOut::of(&spi::spi(|c| answer(store::run(c, &ops), 0)))
}

fn one(op: Value) -> Value {
    let op = parse::op(&op, "", false);
    spi::spi(|c| store::run(c, &[op])).results.remove(0)
}

fn expiry_json(op: &mut Value, ttl_seconds: Option<i64>, forever: bool) {
    if let Some(t) = ttl_seconds {
        op["ttlSeconds"] = json!(t);
    }
    if forever {
        op["forever"] = json!(true);
    }
}

fn value_of(v: Option<JsonbArg>) -> Value {
    v.map_or(Value::Null, |a| a.value("value"))
}

/// The live value of a key, or NULL.
#[pg_extern]
fn kv_get(ns: &str, key: &str) -> Option<JsonOut> {
    let r = one(json!({"op": "get", "ns": ns, "key": key}));
    (r["found"] == true).then(|| JsonOut::of(&r["value"]))
}

/// Writes a key; exactly one of `ttl_seconds` and `forever` declares when it dies.
#[pg_extern]
fn kv_set(
    ns: &str,
    key: &str,
    value: Option<JsonbArg>,
    ttl_seconds: Option<i64>,
    forever: default!(bool, false),
) -> JsonOut {
    let mut op = json!({"op": "put", "ns": ns, "key": key, "value": value_of(value)});
    expiry_json(&mut op, ttl_seconds, forever);
    JsonOut::of(&one(op))
}

/// Writes a key only while it is at version `expect` (0: must not exist).
#[pg_extern]
fn kv_cas(
    ns: &str,
    key: &str,
    expect: i64,
    value: Option<JsonbArg>,
    ttl_seconds: Option<i64>,
    forever: default!(bool, false),
) -> JsonOut {
    let mut op =
        json!({"op": "put", "ns": ns, "key": key, "value": value_of(value), "expect": expect});
    expiry_json(&mut op, ttl_seconds, forever);
    JsonOut::of(&one(op))
}

/// Deletes a key (only at version `expect`, when given).
#[pg_extern]
fn kv_delete(ns: &str, key: &str, expect: default!(Option<i64>, "NULL")) -> JsonOut {
    let mut op = json!({"op": "delete", "ns": ns, "key": key});
    if let Some(e) = expect {
        op["expect"] = json!(e);
    }
    JsonOut::of(&one(op))
}

/// Adds `delta` to a numeric key (absent or expired: 0, created with the
/// given expiry; a live key keeps its own).
#[pg_extern]
fn kv_incr(
    ns: &str,
    key: &str,
    delta: default!(i64, 1),
    ttl_seconds: default!(Option<i64>, "NULL"),
    forever: default!(bool, false),
    max: default!(Option<i64>, "NULL"),
) -> JsonOut {
    let mut op = json!({"op": "incr", "ns": ns, "key": key, "delta": delta});
    if let Some(m) = max {
        op["max"] = json!(m);
    }
    expiry_json(&mut op, ttl_seconds, forever);
    JsonOut::of(&one(op))
}

/// Per-namespace usage as of the last rollup, with the quota beside it.
#[pg_extern]
fn kv_usage(ns: default!(Option<&str>, "NULL")) -> JsonOut {
    let rows = spi::spi(|c| usage::usage(c, ns));
    JsonOut::of(&json!({"namespaces": rows}))
}

/// Sets a namespace's quota (NULL: no limit of that kind); both NULL
/// removes it.
#[pg_extern]
fn kv_quota(ns: &str, max_keys: Option<i64>, max_bytes: Option<i64>) -> JsonOut {
    let ns = parse::check_ns("ns", ns);
    if max_keys.is_some_and(|m| m < 0) || max_bytes.is_some_and(|m| m < 0) {
        errors::invalid("max_keys", "a quota is not negative");
    }
    spi::spi(|c| usage::set_quota(c, &ns, max_keys, max_bytes));
    JsonOut::of(&json!({"ns": ns, "maxKeys": max_keys, "maxBytes": max_bytes}))
}

/// Every namespace holding a live key: `[{"namespace", "keys"}]`.
#[pg_extern]
fn kv_namespaces() -> JsonOut {
    JsonOut::of(&spi::spi(reads::kv::namespaces))
}

/// A page of one namespace's keys, read-only, as Queen's console lists
/// them: `{"namespace", "prefix"?, "after"?, "limit"?, "keysOnly"?,
/// "includeExpired"?}` → `{"rows", "truncated", "nextAfter", "bytes"}`.
#[pg_extern]
fn kv_list(body: Option<JsonbArg>) -> JsonOut {
    let body = super::required("body", body);
    JsonOut::of(&spi::spi(|c| reads::kv::list(c, &body)))
}
