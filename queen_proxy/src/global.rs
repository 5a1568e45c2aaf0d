//! Readers with no routing key: asked of every shard at once (`RUN ON
//! ALL`), their answers merged into the one answer a single database gives.

use pgrx::prelude::*;
use queen_datum::JsonOut;
use serde_json::{Map, Value};

use crate::remote;

fn each(sql: &str) -> Vec<Value> {
    remote::all::<String>(sql, &[])
        .iter()
        .map(|a| remote::parse(sql, a))
        .collect()
}

/// Numbers added key by key (objects alike in shape).
fn add(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(Value::Object(a)), Value::Object(b)) => add(a, b),
            (Some(a @ Value::Number(_)), Value::Number(b)) => {
                *a = match (a.as_i64(), b.as_i64()) {
                    (Some(x), Some(y)) => Value::from(x + y),
                    _ => Value::from(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
                }
            }
            (None, v) => {
                into.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
}

/// Every queue of every shard, by name; `total` added up.
#[pg_extern(volatile)]
fn list_queues() -> JsonOut {
    let mut queues: Vec<Value> = Vec::new();
    let mut total = 0i64;
    for a in each("SELECT queen_remote.list_queues_all()::text") {
        total += a.get("total").and_then(Value::as_i64).unwrap_or(0);
        if let Some(Value::Array(q)) = a.get("queues") {
            queues.extend(q.iter().cloned());
        }
    }
    queues.sort_by(|a, b| {
        let name = |v: &Value| v.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
        name(a).cmp(&name(b))
    });
    JsonOut(serde_json::json!({"queues": queues, "total": total}).to_string())
}

/// The totals of every shard, added up.
#[pg_extern(volatile)]
fn overview() -> JsonOut {
    let mut sum = Map::new();
    for a in each("SELECT queen_remote.overview_all()::text") {
        if let Value::Object(o) = a {
            add(&mut sum, &o);
        }
    }
    JsonOut(Value::Object(sum).to_string())
}
