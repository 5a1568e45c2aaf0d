//! Transactions through the proxy: all or nothing on one shard. Every part
//! of the body that names a queue, a partition or a KV namespace must live
//! on the same shard; a body whose parts live on several is refused
//! (22023, naming them) with nothing written anywhere. Queues with the
//! same shard key (`orders{acme}`, `invoices{acme}`) always live together,
//! and with the KV namespace of that name (`acme`). A required lease names
//! no shard: it is checked on the transaction's shard, where the lease of a
//! queue of that shard is held.

use std::collections::BTreeMap;

use pgrx::prelude::*;
use queen_datum::{JsonOut, JsonbArg};
use queen_frames::push_body::decode_txn_body;
use serde_json::Value;

use crate::errors;
use crate::remote;
use crate::route::Router;

/// What a transaction body touches, by shard: a name for each part.
#[derive(Default)]
pub struct Touches(BTreeMap<i32, Vec<String>>);

impl Touches {
    pub fn add(&mut self, shard: i32, what: String) {
        self.0.entry(shard).or_default().push(what);
    }

    pub fn queue(&mut self, router: &Router, v: Option<&Value>) {
        if let Some(q) = v.and_then(Value::as_str) {
            self.add(router.name(q), format!("queue {q:?}"));
        }
    }

    /// Reads the JSON part of a body (an array of operations, or an object
    /// with `operations`, `kv` and `timers`). What it can not read is left
    /// to the shard to refuse.
    fn json(&mut self, router: &Router, body: &Value) {
        let ops = match body {
            Value::Array(a) => Some(a),
            Value::Object(o) => {
                for kv in o.get("kv").and_then(Value::as_array).into_iter().flatten() {
                    self.namespace(router, kv.get("ns"));
                }
                for t in o
                    .get("timers")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.queue(router, t.get("queue"));
                }
                o.get("operations").and_then(Value::as_array)
            }
            _ => None,
        };
        for op in ops.into_iter().flatten() {
            match op.get("items").and_then(Value::as_array) {
                Some(items) => items
                    .iter()
                    .for_each(|i| self.queue(router, i.get("queue"))),
                None => self.queue(router, op.get("queue")),
            }
            self.partition(router, op.get("partitionId"));
        }
    }

    pub fn namespace(&mut self, router: &Router, v: Option<&Value>) {
        if let Some(ns) = v.and_then(Value::as_str) {
            self.add(router.name(ns), format!("KV namespace {ns:?}"));
        }
    }

    pub fn partition(&mut self, router: &Router, v: Option<&Value>) {
        if let Some(id) = crate::route::id_in(v) {
            self.add(router.id("partitionId", id), format!("partition {id}"));
        }
    }

    /// The one shard of the body; refused when it spans several.
    pub fn shard(self) -> i32 {
        match self.0.len() {
            0 => 0,
            1 => *self.0.keys().next().expect("one shard"),
            _ => {
                let parts: Vec<String> = self
                    .0
                    .iter()
                    .map(|(shard, what)| format!("shard {shard}: {}", what.join(", ")))
                    .collect();
                errors::raise(
                    "22023",
                    format!(
                        "a call made in one transaction must stay on one shard, and this one spans several ({}); \
                         give queues used together the same shard key, as in orders{{acme}} and \
                         invoices{{acme}}, which live with the KV namespace acme",
                        parts.join("; ")
                    ),
                )
            }
        }
    }
}

#[pg_extern(volatile)]
fn transaction(ops: Option<JsonbArg>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = ops.map(|o| o.0);
    let router = Router::load();
    let mut touches = Touches::default();
    if let Some(value) = body
        .as_deref()
        .and_then(|b| serde_json::from_str::<Value>(b).ok())
    {
        touches.json(&router, &value);
    }
    let shard = touches.shard();
    JsonOut(
        remote::one::<String>(
            "SELECT queen_remote.transaction($1, $2::jsonb, $3)::text",
            &[shard.into(), body.as_deref().into(), producer.into()],
        )
        .unwrap_or_else(|| "null".to_owned()),
    )
}

#[pg_extern(volatile)]
fn transaction_binary(body: Option<&[u8]>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let router = Router::load();
    let mut touches = Touches::default();
    if let Some(decoded) = body.and_then(|b| decode_txn_body(b).ok()) {
        if let Ok(head) = serde_json::from_slice::<Value>(&decoded.head) {
            touches.json(&router, &head);
        }
        for g in &decoded.groups {
            touches.add(router.name(&g.queue), format!("queue {:?}", g.queue));
        }
    }
    let shard = touches.shard();
    JsonOut(
        remote::one::<String>(
            "SELECT queen_remote.transaction_binary($1, $2, $3)::text",
            &[shard.into(), body.into(), producer.into()],
        )
        .unwrap_or_else(|| "null".to_owned()),
    )
}
