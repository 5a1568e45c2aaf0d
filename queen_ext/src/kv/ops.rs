//! KV operations: the request shape (`{"op": "put", "ns", "key", ...}`),
//! parsed and checked before anything is touched, and their evaluation
//! against the rows a call holds, which is pure: no clock, no database.
//!
//! Every write declares exactly one expiry (`ttlSeconds` or `forever`); a
//! put never inherits the previous one. `expect: 0` means "must not exist"
//! and an expired row counts as absent; `expect: N` is a pure update.
//! `incr`'s expiry applies only when it creates the key, so a fixed window
//! closes even under constant traffic. A lost precondition is a verdict
//! (`applied: false` with a reason), never an error, unless the op is
//! `required`, which makes it the gate of the whole call.

use serde_json::{json, Number, Value};

use crate::pg::time::micros_to_iso;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Whole seconds from the write.
    Ttl(i64),
    Forever,
}

#[derive(Debug, Clone)]
pub enum Op {
    Get {
        key: Key,
    },
    GetMany {
        ns: String,
        keys: Vec<String>,
    },
    GetPrefix {
        ns: String,
        prefix: String,
        after: Option<String>,
        limit: Option<i64>,
        keys_only: bool,
    },
    Put {
        key: Key,
        value: Value,
        expiry: Expiry,
        expect: Option<i64>,
        required: bool,
    },
    Delete {
        key: Key,
        expect: Option<i64>,
        required: bool,
    },
    Check {
        key: Key,
        expect: i64,
        required: bool,
    },
    Incr {
        key: Key,
        delta: Number,
        min: Option<Number>,
        max: Option<Number>,
        expiry: Expiry,
        required: bool,
    },
    /// A lock's renew: the row keeps its value and gets a new version and
    /// expiry, when it is still at `expect`. Not on the wire.
    Touch {
        key: Key,
        expect: i64,
        expiry: Expiry,
    },
}

/// (namespace, key); ordered bytewise, which is `COLLATE "C"`.
pub type Key = (String, String);

impl Op {
    /// The key the op writes or checks under a row lock, if any.
    pub fn locked_key(&self) -> Option<&Key> {
        match self {
            Op::Put { key, .. }
            | Op::Delete { key, .. }
            | Op::Check { key, .. }
            | Op::Incr { key, .. }
            | Op::Touch { key, .. } => Some(key),
            _ => None,
        }
    }

    /// Every key whose row the evaluation reads.
    pub fn keys(&self) -> Vec<Key> {
        match self {
            Op::Get { key } => vec![key.clone()],
            Op::GetMany { ns, keys } => keys.iter().map(|k| (ns.clone(), k.clone())).collect(),
            Op::GetPrefix { .. } => Vec::new(),
            _ => self.locked_key().cloned().into_iter().collect(),
        }
    }

    pub fn required(&self) -> bool {
        matches!(
            self,
            Op::Put { required: true, .. }
                | Op::Delete { required: true, .. }
                | Op::Check { required: true, .. }
                | Op::Incr { required: true, .. }
        )
    }

    pub fn writes(&self) -> bool {
        matches!(
            self,
            Op::Put { .. } | Op::Delete { .. } | Op::Incr { .. } | Op::Touch { .. }
        )
    }
}

/// A row as the evaluation sees it. `expires_us` None: forever.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub value: Value,
    pub version: i64,
    pub expires_us: Option<i64>,
    pub created_us: i64,
    pub updated_us: i64,
}

impl Row {
    pub fn live(&self, now_us: i64) -> bool {
        self.expires_us.is_none_or(|e| e > now_us)
    }
    /// What the usage rollup counts for a row: key and value text bytes.
    pub fn bytes(&self, key: &str) -> i64 {
        (key.len() + self.value.to_string().len()) as i64
    }
}

pub fn expires_at(us: Option<i64>) -> Value {
    us.map_or(Value::Null, |u| json!(micros_to_iso(u)))
}

fn deadline(expiry: Expiry, now_us: i64) -> Option<i64> {
    match expiry {
        Expiry::Forever => None,
        Expiry::Ttl(s) => Some(now_us.saturating_add(s.saturating_mul(1_000_000))),
    }
}

/// The evaluation of one call's ops, in order, against the rows it holds.
pub struct Eval<'a> {
    pub now_us: i64,
    /// Live row per key, as the ops so far left it.
    pub rows: &'a mut std::collections::BTreeMap<Key, Option<Row>>,
    /// Fresh versions, handed out one per applied write.
    pub versions: &'a mut dyn Iterator<Item = i64>,
}

/// One op's answer, and whether it was a lost precondition of a required op.
pub struct Outcome {
    pub result: Value,
    pub gate_failed: bool,
}

fn lost(key: &Key, reason: &str, cur: Option<&Row>) -> Value {
    let mut v = json!({"applied": false, "key": key.1, "reason": reason});
    if let Some(r) = cur {
        v["version"] = json!(r.version);
        v["value"] = r.value.clone();
    }
    v
}

/// A row as reads answer it; `keys_only` leaves the value out.
pub fn row_json(key: &str, r: &Row, keys_only: bool) -> Value {
    if keys_only {
        json!({"key": key, "version": r.version, "expiresAt": expires_at(r.expires_us)})
    } else {
        json!({"key": key, "value": r.value, "version": r.version, "expiresAt": expires_at(r.expires_us), "updatedAt": micros_to_iso(r.updated_us)})
    }
}

/// The precondition `expect` against the current row: None when it holds,
/// else the reason it does not.
fn precondition(expect: Option<i64>, cur: Option<&Row>) -> Option<&'static str> {
    match (expect, cur) {
        (None, _) => None,
        (Some(0), None) => None,
        (Some(0), Some(_)) => Some("exists"),
        (Some(_), None) => Some("absent"),
        (Some(n), Some(r)) if r.version != n => Some("version"),
        _ => None,
    }
}

impl Eval<'_> {
    fn cur(&self, key: &Key) -> Option<Row> {
        self.rows.get(key).cloned().flatten()
    }

    fn version(&mut self) -> i64 {
        self.versions
            .next()
            .expect("one version was reserved for every write")
    }

    /// Evaluates one op (not getPrefix, which reads the table directly), with
    /// `read_budget` the value bytes reads may still answer.
    pub fn apply(&mut self, op: &Op, read_budget: &mut i64) -> Outcome {
        let ok = |result: Value| Outcome {
            result,
            gate_failed: false,
        };
        match op {
            Op::Get { key } => ok(self.get(key, read_budget)),
            Op::GetMany { ns, keys } => ok(self.get_many(ns, keys, read_budget)),
            Op::GetPrefix { .. } => unreachable!("getPrefix reads the table, not the held rows"),
            Op::Put {
                key,
                value,
                expiry,
                expect,
                required,
            } => self.put(key, value, *expiry, *expect, *required),
            Op::Delete {
                key,
                expect,
                required,
            } => self.delete(key, *expect, *required),
            Op::Check {
                key,
                expect,
                required,
            } => self.check(key, *expect, *required),
            Op::Touch {
                key,
                expect,
                expiry,
            } => ok(self.touch(key, *expect, *expiry)),
            Op::Incr {
                key,
                delta,
                min,
                max,
                expiry,
                required,
            } => self.incr(key, delta, min, max, *expiry, *required),
        }
    }

    /// A get: the row with `found`, its value spending the read budget.
    fn get(&self, key: &Key, read_budget: &mut i64) -> Value {
        match self.cur(key) {
            Some(r) => {
                *read_budget -= r.bytes(&key.1);
                let mut v = row_json(&key.1, &r, false);
                v["found"] = json!(true);
                v
            }
            None => json!({"found": false, "key": key.1}),
        }
    }

    /// A check: applied when the row is at `expect` (0: absent).
    fn check(&self, key: &Key, expect: i64, required: bool) -> Outcome {
        let cur = self.cur(key);
        match precondition(Some(expect), cur.as_ref()) {
            Some(reason) => Outcome {
                result: lost(key, reason, cur.as_ref()),
                gate_failed: required,
            },
            None => {
                let mut v = json!({"applied": true, "key": key.1});
                if let Some(r) = cur {
                    v["version"] = json!(r.version);
                }
                Outcome {
                    result: v,
                    gate_failed: false,
                }
            }
        }
    }

    /// A lock's renew: the row, still at `expect`, given a new version and
    /// expiry.
    fn touch(&mut self, key: &Key, expect: i64, expiry: Expiry) -> Value {
        let now = self.now_us;
        let cur = self.cur(key);
        if let Some(reason) =
            precondition(Some(expect), cur.as_ref()).or(cur.is_none().then_some("absent"))
        {
            return lost(key, reason, cur.as_ref());
        }
        let mut row = cur.expect("checked above");
        row.version = self.version();
        row.expires_us = deadline(expiry, now);
        row.updated_us = now;
        let result = json!({"applied": true, "key": key.1, "version": row.version, "expiresAt": expires_at(row.expires_us)});
        self.rows.insert(key.clone(), Some(row));
        result
    }

    /// A getMany: the rows present, in the asked order, until the read
    /// budget is spent (the first row is always answered).
    fn get_many(&self, ns: &str, keys: &[String], read_budget: &mut i64) -> Value {
        let (mut rows, mut missing, mut truncated) = (Vec::new(), Vec::new(), false);
        for k in keys {
            match self.cur(&(ns.to_owned(), k.clone())) {
                Some(r) => {
                    let b = r.bytes(k);
                    if b > *read_budget && !rows.is_empty() {
                        truncated = true;
                        break;
                    }
                    *read_budget -= b;
                    rows.push(row_json(k, &r, false));
                }
                None => missing.push(json!(k)),
            }
        }
        json!({"rows": rows, "missing": missing, "truncated": truncated})
    }

    /// A put: the value written with `expiry`, when `expect` holds.
    fn put(
        &mut self,
        key: &Key,
        value: &Value,
        expiry: Expiry,
        expect: Option<i64>,
        required: bool,
    ) -> Outcome {
        let now = self.now_us;
        let cur = self.cur(key);
        if let Some(reason) = precondition(expect, cur.as_ref()) {
            return Outcome {
                result: lost(key, reason, cur.as_ref()),
                gate_failed: required,
            };
        }
        let row = Row {
            value: value.clone(),
            version: self.version(),
            expires_us: deadline(expiry, now),
            created_us: cur.as_ref().map_or(now, |c| c.created_us),
            updated_us: now,
        };
        let result = json!({"applied": true, "key": key.1, "version": row.version, "expiresAt": expires_at(row.expires_us)});
        self.rows.insert(key.clone(), Some(row));
        Outcome {
            result,
            gate_failed: false,
        }
    }

    /// A delete: the row removed, when it is there and `expect` holds.
    fn delete(&mut self, key: &Key, expect: Option<i64>, required: bool) -> Outcome {
        let cur = self.cur(key);
        if cur.is_none() {
            return Outcome {
                result: lost(key, "absent", None),
                gate_failed: required,
            };
        }
        if let Some(reason) = precondition(expect, cur.as_ref()) {
            return Outcome {
                result: lost(key, reason, cur.as_ref()),
                gate_failed: required,
            };
        }
        self.rows.insert(key.clone(), None);
        Outcome {
            result: json!({"applied": true, "key": key.1}),
            gate_failed: false,
        }
    }

    /// An incr: the value moved by `delta` within `min`..`max`, a key that
    /// is absent counting as 0 and created with `expiry`.
    fn incr(
        &mut self,
        key: &Key,
        delta: &Number,
        min: &Option<Number>,
        max: &Option<Number>,
        expiry: Expiry,
        required: bool,
    ) -> Outcome {
        let now = self.now_us;
        let ok = |result: Value| Outcome {
            result,
            gate_failed: false,
        };
        let cur = self.cur(key);
        let base = cur.as_ref().map_or(Value::from(0), |r| r.value.clone());
        let next = match add(&base, delta) {
            Err(reason) => {
                return Outcome {
                    result: lost(key, reason, cur.as_ref()),
                    gate_failed: required,
                }
            }
            Ok(n) => n,
        };
        let out_of_range = |bound: &Option<Number>, below: bool| {
            bound.as_ref().is_some_and(|b| {
                let (n, b) = (next.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                if below {
                    n < b
                } else {
                    n > b
                }
            })
        };
        let refused = if out_of_range(max, false) {
            Some("max")
        } else if out_of_range(min, true) {
            Some("min")
        } else {
            None
        };
        if let Some(reason) = refused {
            let mut v = lost(key, reason, cur.as_ref());
            if cur.is_none() {
                v["value"] = json!(0);
            }
            return Outcome {
                result: v,
                gate_failed: required,
            };
        }
        let row = Row {
            value: Value::Number(next),
            version: self.version(),
            // The expiry is create-only: a live key keeps its own.
            expires_us: cur
                .as_ref()
                .map_or_else(|| deadline(expiry, now), |c| c.expires_us),
            created_us: cur.as_ref().map_or(now, |c| c.created_us),
            updated_us: now,
        };
        let result = json!({"applied": true, "key": key.1, "value": row.value, "version": row.version, "expiresAt": expires_at(row.expires_us)});
        self.rows.insert(key.clone(), Some(row));
        ok(result)
    }
}

/// `base + delta`, in integers when both are, else in floating point.
fn add(base: &Value, delta: &Number) -> Result<Number, &'static str> {
    let Value::Number(b) = base else {
        return Err("not_a_number");
    };
    if let (Some(x), Some(d)) = (b.as_i64(), delta.as_i64()) {
        return x.checked_add(d).map(Number::from).ok_or("overflow");
    }
    let sum = b.as_f64().unwrap_or(f64::NAN) + delta.as_f64().unwrap_or(f64::NAN);
    Number::from_f64(sum).ok_or("overflow")
}

/// The smallest string above every string that starts with `prefix`, in
/// bytewise order; None when there is none.
pub fn prefix_upper_bound(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let mut c = last as u32 + 1;
        if (0xD800..=0xDFFF).contains(&c) {
            c = 0xE000;
        }
        if let Some(next) = char::from_u32(c) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn key(k: &str) -> Key {
        ("ns".into(), k.into())
    }

    fn run(rows: &mut BTreeMap<Key, Option<Row>>, now: i64, ops: &[Op]) -> Vec<Value> {
        // Versions keep rising across calls, as the sequence makes them.
        let mut versions = rows
            .values()
            .flatten()
            .map(|r| r.version)
            .max()
            .unwrap_or(99)
            + 1..;
        let mut ev = Eval {
            now_us: now,
            rows,
            versions: &mut versions,
        };
        let mut budget = i64::MAX;
        ops.iter()
            .map(|op| ev.apply(op, &mut budget).result)
            .collect()
    }

    fn put(k: &str, v: Value, expect: Option<i64>) -> Op {
        Op::Put {
            key: key(k),
            value: v,
            expiry: Expiry::Ttl(10),
            expect,
            required: false,
        }
    }

    #[test]
    fn put_if_absent_wins_once_and_the_loser_sees_the_winner() {
        let mut rows = BTreeMap::new();
        rows.insert(key("a"), None);
        let r = run(
            &mut rows,
            0,
            &[put("a", json!(1), Some(0)), put("a", json!(2), Some(0))],
        );
        assert_eq!(r[0]["applied"], true);
        assert_eq!(r[1]["applied"], false);
        assert_eq!(r[1]["reason"], "exists");
        assert_eq!(r[1]["value"], 1);
        assert_eq!(r[1]["version"], r[0]["version"]);
    }

    #[test]
    fn expect_version_is_a_pure_update() {
        let mut rows = BTreeMap::new();
        rows.insert(key("a"), None);
        let r = run(&mut rows, 0, &[put("a", json!(1), Some(7))]);
        assert_eq!(r[0]["reason"], "absent");
        assert_eq!(rows[&key("a")], None, "a failed expect creates nothing");
        let r = run(
            &mut rows,
            0,
            &[put("a", json!(1), None), put("a", json!(2), Some(1))],
        );
        assert_eq!(r[1]["reason"], "version");
        let v = r[0]["version"].as_i64().unwrap();
        let r = run(&mut rows, 0, &[put("a", json!(3), Some(v))]);
        assert_eq!(r[0]["applied"], true);
        assert!(r[0]["version"].as_i64().unwrap() > v, "versions rise");
    }

    #[test]
    fn incr_keeps_a_live_expiry_and_refuses_past_max_without_spending() {
        let mut rows = BTreeMap::new();
        rows.insert(key("n"), None);
        let incr = |max: Option<i64>| Op::Incr {
            key: key("n"),
            delta: 1.into(),
            min: None,
            max: max.map(Number::from),
            expiry: Expiry::Ttl(60),
            required: false,
        };
        let r = run(
            &mut rows,
            1_000_000,
            &[incr(Some(2)), incr(Some(2)), incr(Some(2))],
        );
        assert_eq!(r[0]["value"], 1);
        assert_eq!(r[1]["value"], 2);
        assert_eq!(
            r[1]["expiresAt"], r[0]["expiresAt"],
            "the window does not slide"
        );
        assert_eq!(
            (
                r[2]["applied"].clone(),
                r[2]["reason"].clone(),
                r[2]["value"].clone()
            ),
            (json!(false), json!("max"), json!(2))
        );
        let r = run(
            &mut rows,
            1_000_000,
            &[Op::Incr {
                key: key("n"),
                delta: Number::from_f64(0.5).unwrap(),
                min: None,
                max: None,
                expiry: Expiry::Forever,
                required: false,
            }],
        );
        assert_eq!(r[0]["value"], 2.5);
        rows.insert(
            key("s"),
            Some(Row {
                value: json!("x"),
                version: 1,
                expires_us: None,
                created_us: 0,
                updated_us: 0,
            }),
        );
        let r = run(
            &mut rows,
            0,
            &[Op::Incr {
                key: key("s"),
                delta: 1.into(),
                min: None,
                max: None,
                expiry: Expiry::Forever,
                required: true,
            }],
        );
        assert_eq!(r[0]["reason"], "not_a_number");
    }

    #[test]
    fn expired_rows_are_absent() {
        let mut rows = BTreeMap::new();
        let old = Row {
            value: json!("old"),
            version: 5,
            expires_us: Some(10),
            created_us: 0,
            updated_us: 0,
        };
        assert!(old.live(9) && !old.live(10), "hidden from its instant on");
        rows.insert(key("a"), Some(old).filter(|r| r.live(10)));
        let r = run(
            &mut rows,
            10,
            &[Op::Get { key: key("a") }, put("a", json!("new"), Some(0))],
        );
        assert_eq!(r[0]["found"], false);
        assert_eq!(
            r[1]["applied"], true,
            "expect 0 wins against an expired row"
        );
    }

    #[test]
    fn check_and_delete_verdicts() {
        let mut rows = BTreeMap::new();
        rows.insert(
            key("a"),
            Some(Row {
                value: json!({"owner": "o"}),
                version: 9,
                expires_us: None,
                created_us: 0,
                updated_us: 0,
            }),
        );
        rows.insert(key("b"), None);
        let r = run(
            &mut rows,
            0,
            &[
                Op::Check {
                    key: key("a"),
                    expect: 9,
                    required: true,
                },
                Op::Check {
                    key: key("a"),
                    expect: 0,
                    required: false,
                },
                Op::Check {
                    key: key("b"),
                    expect: 0,
                    required: false,
                },
                Op::Delete {
                    key: key("b"),
                    expect: None,
                    required: false,
                },
                Op::Delete {
                    key: key("a"),
                    expect: Some(8),
                    required: false,
                },
                Op::Delete {
                    key: key("a"),
                    expect: Some(9),
                    required: false,
                },
            ],
        );
        let verdicts: Vec<_> = r
            .iter()
            .map(|v| (v["applied"].clone(), v["reason"].clone()))
            .collect();
        assert_eq!(
            verdicts,
            vec![
                (json!(true), Value::Null),
                (json!(false), json!("exists")),
                (json!(true), Value::Null),
                (json!(false), json!("absent")),
                (json!(false), json!("version")),
                (json!(true), Value::Null)
            ]
        );
        assert_eq!(
            r[4]["value"]["owner"], "o",
            "the loser reads the current value"
        );
    }

    #[test]
    fn prefix_bounds() {
        assert_eq!(prefix_upper_bound("ab").as_deref(), Some("ac"));
        assert_eq!(
            prefix_upper_bound("a\u{D7FF}").as_deref(),
            Some("a\u{E000}")
        );
        assert_eq!(prefix_upper_bound("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_upper_bound("\u{10FFFF}"), None);
        for p in ["ab", "a\u{7F}", "é", "a\u{FFFF}"] {
            let up = prefix_upper_bound(p).unwrap();
            for s in [
                p.to_string(),
                format!("{p}\u{10FFFF}zz"),
                format!("{p}\u{0}"),
            ] {
                assert!(s.as_bytes() < up.as_bytes(), "{s:?} < {up:?}");
            }
            assert!(up.as_bytes() > p.as_bytes());
        }
    }
}
