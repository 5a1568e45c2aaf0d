//! A KV call against the table: hold the rows, evaluate the ops in order,
//! write the net result.
//!
//! The rows a call writes or checks are locked first, all in one statement
//! and in (ns, key) order, `COLLATE "C"`: an existing row through ON
//! CONFLICT (which locks it without writing it), an absent one by inserting
//! a placeholder that nobody else can see (`expires_at = '-infinity'`,
//! removed before the call returns unless a write replaced it). So two calls
//! over the same keys never wait on each other in opposite orders, absent
//! keys included. Then one read, the evaluation in memory (read-your-writes
//! inside the call), the quota check, and one upsert and one delete for the
//! keys whose state changed. A required op whose precondition is lost stops
//! the call before anything is written.

use std::collections::{BTreeMap, BTreeSet};

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use super::ops::{prefix_upper_bound, row_json, Eval, Key, Op, Row};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::query;

/// What a call answered: one result per op, and the index of the required
/// op whose lost precondition stopped it.
pub struct Answer {
    pub results: Vec<Value>,
    pub failed: Option<usize>,
}

fn split(keys: &BTreeSet<Key>) -> (Vec<String>, Vec<String>) {
    keys.iter().cloned().unzip()
}

/// Locks `keys` (sorted) and answers those that were absent (placeholders now).
fn lock(c: &mut SpiClient<'_>, keys: &BTreeSet<Key>) -> BTreeSet<Key> {
    let (ns, key) = split(keys);
    exec(
        c,
        query!("kv_store_lock"),
        &[spi::TEXT_ARRAY, spi::TEXT_ARRAY],
        &[ns.into(), key.into()],
    )
    .map(|r| (spi::col::<String>(&r, "ns"), spi::col::<String>(&r, "key")))
    .collect()
}

struct Quota {
    max_keys: Option<i64>,
    max_bytes: Option<i64>,
    keys: i64,
    bytes: i64,
}

struct Loaded {
    now_us: i64,
    versions: Vec<i64>,
    /// Live rows (None: absent or expired).
    live: BTreeMap<Key, Option<Row>>,
    /// Rows physically present, expired ones included (placeholders not).
    present: BTreeSet<Key>,
    quotas: BTreeMap<String, Quota>,
}

/// The rows of `keys`, the statement's clock and `writes` fresh versions, in
/// one statement. Without keys there is nothing to evaluate and nothing is read.
fn load(c: &mut SpiClient<'_>, keys: &BTreeSet<Key>, writes: i64) -> Loaded {
    let mut out = Loaded {
        now_us: 0,
        versions: Vec::new(),
        live: BTreeMap::new(),
        present: BTreeSet::new(),
        quotas: BTreeMap::new(),
    };
    if keys.is_empty() {
        return out;
    }
    let (ns, key) = split(keys);
    const SQL: &str = query!("kv_store_load");
    for r in exec(
        c,
        SQL,
        &[spi::TEXT_ARRAY, spi::TEXT_ARRAY, spi::INT8],
        &[ns.into(), key.into(), writes.into()],
    ) {
        out.now_us = spi::col(&r, "now_us");
        if out.versions.is_empty() {
            out.versions = spi::col(&r, "versions");
        }
        let k: Key = (spi::col(&r, "n"), spi::col(&r, "kk"));
        let row = spi::opt::<String>(&r, "value").map(|v| Row {
            value: crate::wire::json::parse_value("value", &v),
            version: spi::col(&r, "version"),
            expires_us: spi::opt(&r, "expires_us"),
            created_us: spi::col(&r, "created_us"),
            updated_us: spi::col(&r, "updated_us"),
        });
        if row.is_some() {
            out.present.insert(k.clone());
        }
        if spi::col::<bool>(&r, "has_quota") {
            out.quotas.entry(k.0.clone()).or_insert(Quota {
                max_keys: spi::opt(&r, "max_keys"),
                max_bytes: spi::opt(&r, "max_bytes"),
                keys: spi::col(&r, "used_keys"),
                bytes: spi::col(&r, "used_bytes"),
            });
        }
        let now_us = out.now_us;
        out.live.insert(k, row.filter(|r| r.live(now_us)));
    }
    out
}

/// getPrefix: one keyset page of live rows, in key order.
fn prefix(c: &mut SpiClient<'_>, op: &Op, budget: &mut i64) -> Value {
    let Op::GetPrefix {
        ns,
        prefix,
        after,
        limit,
        keys_only,
    } = op
    else {
        unreachable!()
    };
    let cap = settings::kv_prefix_max_rows();
    let limit = limit.unwrap_or(cap).min(cap);
    // The smallest key above `after` (keys hold no control characters).
    let lower = match after {
        Some(a) if a.as_str() >= prefix.as_str() => format!("{a}\u{1}"),
        _ => prefix.clone(),
    };
    let rows = prefix_rows(c, ns, prefix, &lower, limit);
    prefix_page(&rows, limit, *keys_only, budget)
}

/// Up to `limit + 1` live rows of `ns` from `lower` on that start with
/// `prefix`, in key order.
fn prefix_rows(
    c: &mut SpiClient<'_>,
    ns: &str,
    prefix: &str,
    lower: &str,
    limit: i64,
) -> Vec<(String, Row)> {
    let map = |r: pgrx::spi::SpiHeapTupleData<'_>| {
        (
            spi::col::<String>(&r, "key"),
            Row {
                value: crate::wire::json::parse_value("value", &spi::col::<String>(&r, "value")),
                version: spi::col(&r, "version"),
                expires_us: spi::opt(&r, "expires_us"),
                created_us: 0,
                updated_us: spi::col(&r, "updated_us"),
            },
        )
    };
    // With an upper bound the index range ends at the prefix; a prefix of
    // U+10FFFF only has none, and is filtered instead.
    let (text, third) = match prefix_upper_bound(prefix) {
        Some(up) => (query!("kv_store_prefix_range"), up),
        None => (query!("kv_store_prefix_starts_with"), prefix.to_owned()),
    };
    exec(
        c,
        text,
        &[spi::TEXT, spi::TEXT, spi::TEXT, spi::INT8],
        &[
            ns.into(),
            lower.into(),
            third.as_str().into(),
            (limit + 1).into(),
        ],
    )
    .map(map)
    .collect()
}

/// The page answered from the rows read: at most `limit` of them, until the
/// read budget is spent (the first row is always answered), and where the
/// next page starts when there is more.
fn prefix_page(rows: &[(String, Row)], limit: i64, keys_only: bool, budget: &mut i64) -> Value {
    let mut out = Vec::new();
    let mut truncated = rows.len() as i64 > limit;
    for (k, r) in rows.iter().take(limit as usize) {
        let b = if keys_only {
            k.len() as i64
        } else {
            r.bytes(k)
        };
        if b > *budget && !out.is_empty() {
            truncated = true;
            break;
        }
        *budget -= b;
        out.push(row_json(k, r, keys_only));
    }
    let next_after = if truncated {
        out.last().map(|r| r["key"].clone()).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    json!({"rows": out, "truncated": truncated, "nextAfter": next_after})
}

/// Runs `ops` in order as one unit. Errors (bad quota, database) raise; a
/// lost required precondition answers `failed` having written nothing.
pub fn run(c: &mut SpiClient<'_>, ops: &[Op]) -> Answer {
    if !ops.is_empty() {
        use crate::catalog::switches::{refuse_if_paused, Surface};
        refuse_if_paused(c, Surface::Kv);
    }
    let locked: BTreeSet<Key> = ops.iter().filter_map(|o| o.locked_key().cloned()).collect();
    let read: BTreeSet<Key> = ops.iter().flat_map(|o| o.keys()).collect();
    let placeholders = if locked.is_empty() {
        BTreeSet::new()
    } else {
        lock(c, &locked)
    };
    let writes = ops.iter().filter(|o| o.writes()).count() as i64;
    let mut loaded = load(c, &read, writes);
    let before = loaded.live.clone();
    let mut budget = settings::kv_read_max_bytes();
    let mut results = Vec::with_capacity(ops.len());
    let mut failed = None;
    {
        let mut versions = loaded.versions.iter().copied();
        let mut eval = Eval {
            now_us: loaded.now_us,
            rows: &mut loaded.live,
            versions: &mut versions,
        };
        for (i, op) in ops.iter().enumerate() {
            if matches!(op, Op::GetPrefix { .. }) {
                results.push(prefix(c, op, &mut budget));
                continue;
            }
            let out = eval.apply(op, &mut budget);
            results.push(out.result);
            if out.gate_failed {
                failed = Some(i);
                break;
            }
        }
    }
    if let Some(at) = failed {
        delete(c, &placeholders);
        roll_back(ops, &mut results, at);
        return Answer { results, failed };
    }
    write(c, &loaded, &before, &placeholders);
    Answer {
        results,
        failed: None,
    }
}

/// The answers of a call a required op stopped at `at`: the writes before it
/// are rolled back (nothing was written), the ops after it not evaluated.
fn roll_back(ops: &[Op], results: &mut Vec<Value>, at: usize) {
    for (i, op) in ops.iter().enumerate() {
        if i < at && op.writes() && results[i]["applied"] == true {
            results[i] =
                json!({"applied": false, "key": results[i]["key"], "reason": "rolled_back"});
        }
    }
    results.extend(
        ops[at + 1..]
            .iter()
            .map(|_| json!({"applied": false, "reason": "not_evaluated"})),
    );
}

/// Writes the net result of the evaluated ops: the rows that changed, within
/// their namespaces' quotas, and the rows gone (deleted by an op, or a
/// placeholder nothing wrote over).
fn write(
    c: &mut SpiClient<'_>,
    loaded: &Loaded,
    before: &BTreeMap<Key, Option<Row>>,
    placeholders: &BTreeSet<Key>,
) {
    let changed: Vec<&Key> = loaded
        .live
        .keys()
        .filter(|k| loaded.live[*k] != before[*k])
        .collect();
    check_quota(loaded, before, &changed);
    let upserts: Vec<(&Key, &Row)> = changed
        .iter()
        .filter_map(|k| loaded.live[*k].as_ref().map(|r| (*k, r)))
        .collect();
    if !upserts.is_empty() {
        upsert(c, &upserts);
    }
    let gone: BTreeSet<Key> = changed
        .iter()
        .filter(|k| loaded.live[**k].is_none() && loaded.present.contains(**k))
        .map(|k| (*k).clone())
        .chain(
            placeholders
                .iter()
                .filter(|k| loaded.live.get(*k).is_none_or(|r| r.is_none()))
                .cloned(),
        )
        .collect();
    delete(c, &gone);
}

/// Refuses growth past a namespace's quota, measured against its last
/// rollup plus what this call adds.
fn check_quota(loaded: &Loaded, before: &BTreeMap<Key, Option<Row>>, changed: &[&Key]) {
    for (ns, q) in &loaded.quotas {
        let (mut keys, mut bytes) = (0i64, 0i64);
        for k in changed.iter().filter(|k| &k.0 == ns) {
            let old = before[*k].as_ref();
            let new = loaded.live[*k].as_ref();
            keys += new.is_some() as i64 - old.is_some() as i64;
            bytes += new.map_or(0, |r| r.bytes(&k.1)) - old.map_or(0, |r| r.bytes(&k.1));
        }
        if let Some(max) = q.max_keys.filter(|m| keys > 0 && q.keys + keys > *m) {
            errors::quota_exceeded(format!(
                "namespace {ns:?} would hold {} keys, its quota is {max}; nothing was written",
                q.keys + keys
            ));
        }
        if let Some(max) = q.max_bytes.filter(|m| bytes > 0 && q.bytes + bytes > *m) {
            errors::quota_exceeded(format!(
                "namespace {ns:?} would hold {} bytes, its quota is {max}; nothing was written",
                q.bytes + bytes
            ));
        }
    }
}

fn upsert(c: &mut SpiClient<'_>, rows: &[(&Key, &Row)]) {
    let ns: Vec<&str> = rows.iter().map(|(k, _)| k.0.as_str()).collect();
    let key: Vec<&str> = rows.iter().map(|(k, _)| k.1.as_str()).collect();
    let value: Vec<String> = rows.iter().map(|(_, r)| r.value.to_string()).collect();
    let version: Vec<i64> = rows.iter().map(|(_, r)| r.version).collect();
    let expires: Vec<Option<i64>> = rows.iter().map(|(_, r)| r.expires_us).collect();
    let created: Vec<i64> = rows.iter().map(|(_, r)| r.created_us).collect();
    let updated: Vec<i64> = rows.iter().map(|(_, r)| r.updated_us).collect();
    exec(
        c,
        query!("kv_store_upsert"),
        &[
            spi::TEXT_ARRAY,
            spi::TEXT_ARRAY,
            spi::TEXT_ARRAY,
            spi::INT8_ARRAY,
            spi::INT8_ARRAY,
            spi::INT8_ARRAY,
            spi::INT8_ARRAY,
        ],
        &[
            ns.into(),
            key.into(),
            value.into(),
            version.into(),
            expires.into(),
            created.into(),
            updated.into(),
        ],
    );
}

fn delete(c: &mut SpiClient<'_>, keys: &BTreeSet<Key>) {
    if keys.is_empty() {
        return;
    }
    let (ns, key) = split(keys);
    exec(
        c,
        query!("kv_store_delete"),
        &[spi::TEXT_ARRAY, spi::TEXT_ARRAY],
        &[ns.into(), key.into()],
    );
}
