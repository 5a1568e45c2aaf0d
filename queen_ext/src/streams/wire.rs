//! The streaming SDK's bodies (`/streams/v1/queries`, `/state/get`,
//! `/cycle`), snake_case at the top level as the SDK sends them, checked
//! whole before anything is read or written.

use serde_json::Value;

use crate::pg::errors;
use crate::wire::ack::{self as ack_wire, AckIn};
use crate::wire::json::{as_i64, check_name, parse_uuid, Obj, MAX_NAME_BYTES};
use crate::wire::QUEUE_MODE;

/// `POST /streams/v1/queries`.
pub struct Register {
    pub name: String,
    pub source_queue: String,
    pub sink_queue: Option<String>,
    pub config_hash: String,
    pub reset: bool,
}

impl Register {
    pub fn parse(body: &Value) -> Register {
        let o = Obj::new(body, "");
        Register {
            name: o.req_name("name").to_owned(),
            source_queue: o.req_name("source_queue").to_owned(),
            config_hash: o.req_name("config_hash").to_owned(),
            // An empty sink is no sink.
            sink_queue: o
                .opt_str("sink_queue")
                .filter(|s| !s.is_empty())
                .map(|s| check_name("sink_queue", s).to_owned()),
            reset: o.opt_bool("reset").unwrap_or(false),
        }
    }
}

/// The query and source partition every call after the registration names.
fn query_and_partition(o: &Obj<'_>) -> (pgrx::Uuid, i64) {
    let query_id = parse_uuid("query_id", o.req_str("query_id"));
    let partition_id = match o.get("partition_id") {
        Some(v) => as_i64("partition_id", v),
        None => errors::invalid("partition_id", "is required"),
    };
    (pgrx::Uuid::from_bytes(*query_id.as_bytes()), partition_id)
}

/// `POST /streams/v1/state/get`.
pub struct StateGet {
    pub query_id: pgrx::Uuid,
    pub partition_id: i64,
    /// None (or empty in the body): every key.
    pub keys: Option<Vec<String>>,
    pub key_prefix: Option<String>,
    /// Epoch milliseconds: only values whose `windowEnd` is a number at
    /// most this.
    pub ripe_at_or_before: Option<f64>,
}

impl StateGet {
    pub fn parse(body: &Value) -> StateGet {
        let o = Obj::new(body, "");
        let (query_id, partition_id) = query_and_partition(&o);
        let keys = o.opt_array("keys").filter(|k| !k.is_empty()).map(|keys| {
            keys.iter()
                .enumerate()
                .map(|(i, k)| match k {
                    Value::String(s) => s.clone(),
                    _ => errors::wrong_type(&format!("keys[{i}]"), "a string"),
                })
                .collect()
        });
        let ripe_at_or_before = o.get("ripe_at_or_before").map(|v| {
            v.as_f64()
                .filter(|f| f.is_finite())
                .unwrap_or_else(|| errors::wrong_type("ripe_at_or_before", "a number"))
        });
        StateGet {
            query_id,
            partition_id,
            keys,
            key_prefix: o
                .opt_str("key_prefix")
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
            ripe_at_or_before,
        }
    }
}

/// One state write of a cycle, in request order.
pub enum StateOp {
    /// The value as JSON text.
    Upsert(String, String),
    Delete(String),
}

impl StateOp {
    pub fn key(&self) -> &str {
        match self {
            StateOp::Upsert(k, _) | StateOp::Delete(k) => k,
        }
    }
}

/// `POST /streams/v1/cycle`.
pub struct Cycle {
    pub query_id: pgrx::Uuid,
    pub partition_id: i64,
    /// The partition id as the caller wrote it, answered back.
    pub partition_text: String,
    pub group: String,
    pub state_ops: Vec<StateOp>,
    /// Push items as `/api/v1/push` takes them.
    pub push_items: Vec<Value>,
    pub ack: Option<CycleAck>,
    pub release_lease: bool,
}

/// The ack of a cycle: the source batch leased with the message it names,
/// with the status it gives, under the lease it names.
pub struct CycleAck {
    pub ack: AckIn,
    /// The messages of the batch the cycle covers, from its start: what a
    /// cycle that keeps its lease acks.
    pub count: Option<i64>,
}

impl Cycle {
    pub fn parse(body: &Value) -> Cycle {
        let o = Obj::new(body, "");
        let (query_id, partition_id) = query_and_partition(&o);
        let group = o
            .opt_str("consumer_group")
            .filter(|g| !g.is_empty())
            .map(|g| check_name("consumer_group", g))
            .unwrap_or(QUEUE_MODE)
            .to_owned();
        let state_ops = o
            .opt_array("state_ops")
            .map(|ops| state_ops(ops))
            .unwrap_or_default();
        let push_items = o.opt_array("push_items").cloned().unwrap_or_default();
        for (i, item) in push_items.iter().enumerate() {
            Obj::new(item, format!("push_items[{i}]"));
        }
        let ack = o.get("ack").map(|a| {
            let ao = Obj::new(a, "ack");
            // The lease is what fences a cycle: an ack must name it.
            ao.req_str("leaseId");
            let count = ao.opt_i64("count");
            if count.is_some_and(|n| n < 1) {
                errors::invalid("ack.count", "must be at least 1");
            }
            let mut named = a.clone();
            named["partitionId"] = Value::from(partition_id);
            named["consumerGroup"] = Value::from(group.as_str());
            CycleAck {
                ack: ack_wire::parse_one(&named, "ack", 0, None),
                count,
            }
        });
        Cycle {
            query_id,
            partition_id,
            partition_text: partition_id.to_string(),
            group,
            state_ops,
            push_items,
            ack,
            release_lease: o.opt_bool("release_lease").unwrap_or(true),
        }
    }
}

fn state_ops(ops: &[Value]) -> Vec<StateOp> {
    let max = crate::pg::settings::stream_max_rows();
    if ops.len() as i64 > max {
        errors::program_limit(
            "state_ops",
            format!(
                "{} operations is more than queen.stream_max_rows ({max}) allows",
                ops.len()
            ),
        );
    }
    ops.iter()
        .enumerate()
        .map(|(i, op)| {
            let path = format!("state_ops[{i}]");
            let o = Obj::new(op, path);
            let key = o.req_str("key");
            if key.len() > MAX_NAME_BYTES {
                errors::too_long(&o.field("key"), key.len(), MAX_NAME_BYTES);
            }
            if key.contains('\0') {
                errors::invalid(&o.field("key"), "must not contain a NUL character");
            }
            match o.req_str("type") {
                "upsert" => {
                    let value = o.get("value").map_or_else(
                        || "{}".to_owned(),
                        |v| serde_json::to_string(v).expect("values serialize"),
                    );
                    StateOp::Upsert(key.to_owned(), value)
                }
                "delete" => StateOp::Delete(key.to_owned()),
                other => errors::invalid(
                    &o.field("type"),
                    format!("{other:?} is not one of upsert, delete"),
                ),
            }
        })
        .collect()
}
