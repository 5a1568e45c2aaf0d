//! Message traces: what a consumer records about a message while handling
//! it (`queen.message_traces`, filed under names in
//! `queen.message_trace_names`), and the three readers, answered in Queen's
//! snake_case keys. A trace is keyed by the message's address and checked
//! against nothing: it outlives its message and its partition until the
//! metrics window ages it out (`maintenance::retention::cleanup`).

use pgrx::spi::SpiClient;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;
use crate::wire::json::{as_i64, check_name, Obj};
use crate::wire::QUEUE_MODE;

/// Most names one trace is filed under.
pub const MAX_TRACE_NAMES: usize = 64;
/// The event type of a trace that names none, as Queen's server records it.
pub const DEFAULT_EVENT_TYPE: &str = "info";

/// A trace to record, checked.
pub struct TraceIn {
    pub partition_id: i64,
    pub transaction_id: String,
    pub consumer_group: String,
    pub event_type: String,
    /// The `data` object's JSON text.
    pub data: String,
    pub names: Vec<String>,
    pub worker_id: Option<String>,
}

impl TraceIn {
    /// The body `message.trace()` sends: transactionId, partitionId, data
    /// (required), consumerGroup, eventType, traceNames (a name or a list of
    /// names), workerId.
    pub fn parse(body: &Value) -> TraceIn {
        let o = Obj::new(body, "");
        let transaction_id = o
            .opt_str("transactionId")
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| errors::invalid("transactionId", "is required"));
        check_name("transactionId", transaction_id);
        let partition_id = o
            .get("partitionId")
            .filter(|v| v.as_str() != Some(""))
            .map(|v| as_i64("partitionId", v))
            .unwrap_or_else(|| errors::invalid("partitionId", "is required"));
        let data = o
            .get("data")
            .unwrap_or_else(|| errors::invalid("data", "is required"));
        let names: Vec<String> = match o.get("traceNames") {
            None => Vec::new(),
            Some(Value::String(s)) => vec![check_name("traceNames", s).to_owned()],
            Some(Value::Array(items)) => {
                let mut names: Vec<String> = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let field = format!("traceNames[{i}]");
                    let Value::String(s) = item else {
                        errors::wrong_type(&field, "a string")
                    };
                    let s = check_name(&field, s).to_owned();
                    if !names.contains(&s) {
                        names.push(s);
                    }
                }
                names
            }
            Some(_) => errors::wrong_type("traceNames", "a string or an array of strings"),
        };
        if names.len() > MAX_TRACE_NAMES {
            errors::invalid(
                "traceNames",
                format!(
                    "{} names is more than the {MAX_TRACE_NAMES} allowed",
                    names.len()
                ),
            );
        }
        TraceIn {
            partition_id,
            transaction_id: transaction_id.to_owned(),
            consumer_group: o.opt_name("consumerGroup").unwrap_or(QUEUE_MODE).to_owned(),
            event_type: o
                .opt_name("eventType")
                .unwrap_or(DEFAULT_EVENT_TYPE)
                .to_owned(),
            data: data.to_string(),
            names,
            worker_id: o.opt_name("workerId").map(str::to_owned),
        }
    }
}

/// Records a trace; answers its id.
pub fn record(client: &mut SpiClient<'_>, t: &TraceIn) -> String {
    let id = uuid::Uuid::new_v4();
    exec(
        client,
        query!("traces_record"),
        &[
            spi::UUID,
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT_ARRAY,
        ],
        &[
            pgrx::Uuid::from_bytes(*id.as_bytes()).into(),
            t.partition_id.into(),
            t.transaction_id.as_str().into(),
            t.consumer_group.as_str().into(),
            t.event_type.as_str().into(),
            t.data.as_str().into(),
            t.worker_id.as_deref().into(),
            t.names.clone().into(),
        ],
    )
    .next()
    .map(|r| spi::col::<String>(&r, "trace_id"))
    .expect("the insert answers its row")
}

fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).expect("jsonb prints JSON")
}

/// A trace as the reader of one message answers it.
#[derive(Serialize)]
pub struct Trace {
    pub id: String,
    pub event_type: String,
    pub data: Box<RawValue>,
    pub consumer_group: String,
    pub worker_id: Option<String>,
    pub created_at: String,
    pub trace_names: Vec<String>,
}

/// The traces of one message, oldest first, at most `limit`.
pub fn for_message(client: &mut SpiClient<'_>, pid: i64, txn: &str, limit: i64) -> Vec<Trace> {
    exec(
        client,
        query!("traces_for_message"),
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[pid.into(), txn.into(), limit.into()],
    )
    .map(|r| Trace {
        id: spi::col(&r, "id"),
        event_type: spi::col(&r, "event_type"),
        data: raw(spi::col(&r, "data")),
        consumer_group: spi::col(&r, "consumer_group"),
        worker_id: spi::opt(&r, "worker_id"),
        created_at: micros_to_iso(spi::col(&r, "created_us")),
        trace_names: spi::col(&r, "trace_names"),
    })
    .collect()
}

/// A trace as the by-name reader answers it: with its message's address.
#[derive(Serialize)]
pub struct NamedTrace {
    pub id: String,
    pub transaction_id: String,
    pub partition_id: String,
    pub event_type: String,
    pub data: Box<RawValue>,
    pub consumer_group: String,
    pub worker_id: Option<String>,
    pub created_at: String,
    pub queue_name: String,
    pub partition_name: String,
    /// Always null, as Queen answers it: payloads live in segments.
    pub message_payload: Option<()>,
    pub trace_names: Vec<String>,
}

/// One page of the traces filed under `name`, oldest first, and how many
/// there are in all.
pub fn by_name(
    client: &mut SpiClient<'_>,
    name: &str,
    limit: i64,
    offset: i64,
) -> (Vec<NamedTrace>, i64) {
    let total = exec(
        client,
        query!("traces_by_name_total"),
        &[spi::TEXT],
        &[name.into()],
    )
    .next()
    .map(|r| spi::col::<i64>(&r, "total"))
    .unwrap_or(0);
    let rows = exec(
        client,
        query!("traces_by_name"),
        &[spi::TEXT, spi::INT8, spi::INT8],
        &[name.into(), limit.into(), offset.into()],
    )
    .map(|r| NamedTrace {
        id: spi::col(&r, "id"),
        transaction_id: spi::col(&r, "transaction_id"),
        partition_id: spi::col::<i64>(&r, "partition_id").to_string(),
        event_type: spi::col(&r, "event_type"),
        data: raw(spi::col(&r, "data")),
        consumer_group: spi::col(&r, "consumer_group"),
        worker_id: spi::opt(&r, "worker_id"),
        created_at: micros_to_iso(spi::col(&r, "created_us")),
        queue_name: spi::col(&r, "queue_name"),
        partition_name: spi::col(&r, "partition_name"),
        message_payload: None,
        trace_names: spi::col(&r, "trace_names"),
    })
    .collect();
    (rows, total)
}

/// A trace name and how it is used.
#[derive(Serialize)]
pub struct TraceName {
    pub trace_name: String,
    pub trace_count: i64,
    pub message_count: i64,
    pub last_seen: String,
}

/// One page of the trace names, most recently used first, and how many
/// there are in all.
pub fn names(client: &mut SpiClient<'_>, limit: i64, offset: i64) -> (Vec<TraceName>, i64) {
    let total = exec(client, query!("traces_names_total"), &[], &[])
        .next()
        .map(|r| spi::col::<i64>(&r, "total"))
        .unwrap_or(0);
    let rows = exec(
        client,
        query!("traces_names"),
        &[spi::INT8, spi::INT8],
        &[limit.into(), offset.into()],
    )
    .map(|r| TraceName {
        trace_name: spi::col(&r, "trace_name"),
        trace_count: spi::col(&r, "trace_count"),
        message_count: spi::col(&r, "message_count"),
        last_seen: micros_to_iso(spi::col(&r, "last_seen_us")),
    })
    .collect();
    (rows, total)
}
