//! Locks and semaphores as leases on KV rows, with a fencing token.
//!
//! A permit is the row `name#slot` in namespace `queen-locks`, written with
//! the holder's lifetime: acquire is a put-if-absent on a free slot, renew a
//! version-fenced rewrite (same value, new version, new expiry), release a
//! version-fenced delete. The token is the row's version, which comes from
//! one sequence and so only rises on a name, across releases too. A lock is
//! the semaphore of one permit; the limit is passed by every caller and
//! stored nowhere. Verdicts (held by another, lost) are answers; only a bad
//! request is an error. The ops of one call are independent and are taken
//! in name order, so two calls over the same locks never wait on each other
//! in opposite orders.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use super::ops::{Expiry, Op};
use super::parse::{check_key, LOCKS_NS as NS};
use super::store;
use crate::pg::errors;
use crate::wire::json::Obj;

pub const NAME_MAX_BYTES: usize = 256;
pub const OWNER_MAX_BYTES: usize = 256;
pub const LIMIT_MAX: i64 = 1024;

pub enum LockOp {
    Acquire {
        name: String,
        ttl: i64,
        owner: String,
        limit: i64,
    },
    Renew {
        name: String,
        token: i64,
        ttl: i64,
        slot: i64,
    },
    Release {
        name: String,
        token: i64,
        slot: i64,
    },
    Get {
        name: String,
    },
}

impl LockOp {
    fn name(&self) -> &str {
        match self {
            LockOp::Acquire { name, .. }
            | LockOp::Renew { name, .. }
            | LockOp::Release { name, .. }
            | LockOp::Get { name } => name,
        }
    }
}

fn text(o: &Obj<'_>, field: &str, max: usize, allow_hash: bool) -> String {
    let s = o.req_str(field);
    if s.is_empty()
        || s.len() > max
        || s.chars()
            .any(|c| c.is_control() || (!allow_hash && c == '#'))
    {
        errors::invalid(
            &o.field(field),
            format!(
                "a non-empty string of at most {max} bytes without control characters{}",
                if allow_hash { "" } else { " or '#'" }
            ),
        );
    }
    s.to_owned()
}

fn positive(o: &Obj<'_>, field: &str, what: &str) -> i64 {
    match o.opt_i64(field) {
        Some(v) if v > 0 => v,
        Some(v) => errors::invalid(
            &o.field(field),
            format!("{what} must be above zero, got {v}"),
        ),
        None => errors::invalid(&o.field(field), format!("{what} is required")),
    }
}

fn slot(o: &Obj<'_>) -> i64 {
    match o.opt_i64("slot") {
        None => 0,
        Some(s) if (0..LIMIT_MAX).contains(&s) => s,
        Some(s) => errors::invalid(
            &o.field("slot"),
            format!("a slot is 0 to {}, got {s}", LIMIT_MAX - 1),
        ),
    }
}

pub fn parse(v: &Value, path: &str) -> LockOp {
    let o = Obj::new(v, path);
    let name = text(&o, "name", NAME_MAX_BYTES, false);
    let ttl = |o: &Obj<'_>| {
        if o.opt_i64("ttlSeconds")
            .is_some_and(|t| t > crate::wire::json::MAX_DURATION_SECONDS)
        {
            errors::invalid(
                &o.field("ttlSeconds"),
                format!(
                    "must be at most {} seconds",
                    crate::wire::json::MAX_DURATION_SECONDS
                ),
            );
        }
        if o.get("forever").is_some() {
            errors::invalid(
                &o.field("forever"),
                "a lock has no forever: a holder that needs longer renews",
            );
        }
        positive(
            o,
            "ttlSeconds",
            "ttlSeconds (the permit's lifetime in whole seconds)",
        )
    };
    match o.req_str("op") {
        "acquire" => {
            let limit = o.opt_i64("limit").unwrap_or(1);
            if !(1..=LIMIT_MAX).contains(&limit) {
                errors::invalid(
                    &o.field("limit"),
                    format!("limit is 1 (a lock) to {LIMIT_MAX}, got {limit}"),
                );
            }
            let owner = match o.opt_str("owner") {
                Some(_) => text(&o, "owner", OWNER_MAX_BYTES, true),
                None => queen_frames::id_text(&queen_frames::new_message_id()),
            };
            LockOp::Acquire {
                name,
                ttl: ttl(&o),
                owner,
                limit,
            }
        }
        "renew" => LockOp::Renew {
            name,
            token: positive(&o, "token", "token"),
            ttl: ttl(&o),
            slot: slot(&o),
        },
        "release" => LockOp::Release {
            name,
            token: positive(&o, "token", "token"),
            slot: slot(&o),
        },
        "get" => LockOp::Get { name },
        other => errors::invalid(
            &o.field("op"),
            format!("{other:?} is not one of acquire, renew, release, get"),
        ),
    }
}

fn slot_key(name: &str, slot: i64) -> String {
    check_key("name", &format!("{name}#{slot}"))
}

fn guard(name: &str, slot: i64, token: i64) -> Value {
    json!({"op": "check", "ns": NS, "key": format!("{name}#{slot}"), "expect": token, "required": true})
}

/// The live permits of `name`, as `holders`.
fn holders(c: &mut SpiClient<'_>, name: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut after = None;
    loop {
        let page = store::run(
            c,
            &[Op::GetPrefix {
                ns: NS.into(),
                prefix: format!("{name}#"),
                after: after.clone(),
                limit: Some(LIMIT_MAX),
                keys_only: false,
            }],
        );
        let page = &page.results[0];
        for r in page["rows"].as_array().into_iter().flatten() {
            let key = r["key"].as_str().unwrap_or_default();
            let slot: i64 = key
                .rsplit('#')
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            rows.push(json!({
                "slot": slot,
                "owner": r["value"]["owner"],
                "token": r["version"],
                "since": r["value"]["since"],
                "expiresAt": r["expiresAt"],
                "renewedAt": r["updatedAt"],
            }));
        }
        if page["truncated"] != true || rows.len() as i64 >= LIMIT_MAX {
            break;
        }
        after = page["nextAfter"].as_str().map(str::to_owned);
    }
    rows.sort_by_key(|r| r["slot"].as_i64());
    rows
}

fn acquire(c: &mut SpiClient<'_>, name: &str, ttl: i64, owner: &str, limit: i64) -> Value {
    let current = holders(c, name);
    if let Some(mine) = current
        .iter()
        .find(|h| h["owner"] == owner && h["slot"].as_i64().is_some_and(|s| s < limit))
    {
        let (slot, token) = (
            mine["slot"].as_i64().unwrap(),
            mine["token"].as_i64().unwrap(),
        );
        return json!({"acquired": true, "already": true, "slot": slot, "token": token, "owner": owner, "guard": guard(name, slot, token)});
    }
    let taken: Vec<i64> = current.iter().filter_map(|h| h["slot"].as_i64()).collect();
    let mut free: Vec<(String, i64)> = (0..limit)
        .filter(|s| !taken.contains(s))
        .map(|s| (slot_key(name, s), s))
        .collect();
    if free.is_empty() {
        return json!({"acquired": false, "reason": "held", "holders": current});
    }
    // Keys in (ns, key) order, the declared order of the KV space.
    free.sort();
    for (key, slot) in free {
        let now = crate::pg::time::micros_to_iso(crate::pg::time::statement_start_us());
        let put = Op::Put {
            key: (NS.into(), key),
            value: json!({"owner": owner, "since": now}),
            expiry: Expiry::Ttl(ttl),
            expect: Some(0),
            required: false,
        };
        let r = &store::run(c, &[put]).results[0];
        if r["applied"] == true {
            let token = r["version"].as_i64().unwrap();
            return json!({"acquired": true, "slot": slot, "token": token, "owner": owner, "guard": guard(name, slot, token)});
        }
    }
    json!({"acquired": false, "reason": "contended", "holders": holders(c, name)})
}

fn one(c: &mut SpiClient<'_>, op: &LockOp) -> Value {
    match op {
        LockOp::Acquire {
            name,
            ttl,
            owner,
            limit,
        } => acquire(c, name, *ttl, owner, *limit),
        LockOp::Renew {
            name,
            token,
            ttl,
            slot,
        } => {
            let touch = Op::Touch {
                key: (NS.into(), slot_key(name, *slot)),
                expect: *token,
                expiry: Expiry::Ttl(*ttl),
            };
            let r = &store::run(c, &[touch]).results[0];
            if r["applied"] == true {
                let token = r["version"].as_i64().unwrap();
                json!({"renewed": true, "slot": slot, "token": token, "guard": guard(name, *slot, token)})
            } else {
                json!({"renewed": false, "reason": "lost", "holders": holders(c, name)})
            }
        }
        LockOp::Release { name, token, slot } => {
            let del = Op::Delete {
                key: (NS.into(), slot_key(name, *slot)),
                expect: Some(*token),
                required: false,
            };
            let r = &store::run(c, &[del]).results[0];
            if r["applied"] == true {
                json!({"released": true, "slot": slot})
            } else {
                json!({"released": false, "reason": "lost"})
            }
        }
        LockOp::Get { name } => {
            let h = holders(c, name);
            json!({"held": !h.is_empty(), "holders": h})
        }
    }
}

/// Runs a locks call: results in the request's order, work in name order.
pub fn run(c: &mut SpiClient<'_>, ops: &[LockOp]) -> Vec<Value> {
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by(|a, b| ops[*a].name().cmp(ops[*b].name()));
    let mut results = vec![Value::Null; ops.len()];
    for i in order {
        results[i] = one(c, &ops[i]);
    }
    results
}
