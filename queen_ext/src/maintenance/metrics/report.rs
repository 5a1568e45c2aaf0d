//! The figures a front-end reports of itself: one call adds the requests it
//! answered since its last report to the minute's row of `worker_metrics`
//! under its own worker id and host, beside the extension's `queen_ext`
//! row. Every figure is checked here (known keys, non-negative integers,
//! bounded) before anything is written.

use pgrx::spi::SpiClient;
use serde_json::{json, Map, Value};

use super::sample::WORKER_ID;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;

/// The counts a report may carry, as the series' columns name them; a key
/// left out counts 0.
pub const COUNT_KEYS: [&str; 10] = [
    "push_request_count",
    "push_message_count",
    "pop_request_count",
    "pop_message_count",
    "pop_empty_count",
    "ack_request_count",
    "ack_success_count",
    "ack_failed_count",
    "dlq_count",
    "transaction_count",
];
/// The front-end's process id (0 when left out).
pub const PID_KEY: &str = "pid";
/// The database connections the front-end holds (0 when left out).
pub const CONNECTIONS_KEY: &str = "db_connections";
/// The most one count of one report may add: a billion requests a second
/// for a quarter of an hour, far past what one front answers in a minute.
pub const MAX_REPORT_COUNT: i64 = 1_000_000_000_000;
/// The longest worker id and host name kept, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

fn name(field: &str, value: &str) -> String {
    if value.trim().is_empty() {
        errors::invalid(field, "must not be empty");
    }
    if value.len() > MAX_NAME_BYTES {
        errors::too_long(field, value.len(), MAX_NAME_BYTES);
    }
    value.to_owned()
}

fn figure(key: &str, v: &Value, max: i64) -> i64 {
    match v.as_i64() {
        Some(n) if (0..=max).contains(&n) => n,
        Some(n) => errors::invalid(key, format!("{n} is not between 0 and {max}")),
        None => errors::invalid(key, format!("{v} is not a non-negative integer")),
    }
}

/// The checked record the statement takes: every count, the connections.
fn record(figures: &Value) -> (i32, Map<String, Value>) {
    let Some(given) = figures.as_object() else {
        errors::invalid("figures", "must be a JSON object");
    };
    let mut out: Map<String, Value> = COUNT_KEYS
        .iter()
        .map(|k| (k.to_string(), json!(0)))
        .collect();
    out.insert(CONNECTIONS_KEY.into(), json!(0));
    let mut pid = 0;
    for (k, v) in given {
        if k == PID_KEY {
            pid = figure(k, v, i32::MAX as i64) as i32;
        } else if k == CONNECTIONS_KEY {
            out.insert(k.clone(), json!(figure(k, v, i32::MAX as i64)));
        } else if COUNT_KEYS.contains(&k.as_str()) {
            out.insert(k.clone(), json!(figure(k, v, MAX_REPORT_COUNT)));
        } else {
            errors::invalid(k, "is not a figure a front-end reports");
        }
    }
    (pid, out)
}

/// Adds `figures` to the minute's row of (`hostname`, `worker_id`) and
/// answers the row as it now stands. `queen_ext` is the extension's own
/// producer and is refused (22023).
pub fn report(c: &mut SpiClient<'_>, worker_id: &str, hostname: &str, figures: &Value) -> Value {
    let worker_id = name("worker_id", worker_id);
    let hostname = name("hostname", hostname);
    if worker_id == WORKER_ID {
        errors::invalid("worker_id", format!("{WORKER_ID} is the extension's own"));
    }
    let (pid, rec) = record(figures);
    let r = exec(
        c,
        query!("metrics_front_report"),
        &[spi::TEXT, spi::TEXT, spi::INT4, spi::JSONB],
        &[
            hostname.as_str().into(),
            worker_id.as_str().into(),
            pid.into(),
            pgrx::JsonB(Value::Object(rec)).into(),
        ],
    )
    .next()
    .expect("the upsert answers its row");
    let mut out = Map::new();
    out.insert(
        "bucketTime".into(),
        json!(micros_to_iso(spi::col::<i64>(&r, "bucket_us"))),
    );
    out.insert("hostname".into(), json!(hostname));
    out.insert("workerId".into(), json!(worker_id));
    out.insert(PID_KEY.into(), json!(spi::col::<i32>(&r, "pid")));
    for k in COUNT_KEYS.iter().chain([&CONNECTIONS_KEY]) {
        out.insert(k.to_string(), json!(spi::col::<i64>(&r, k)));
    }
    Value::Object(out)
}
