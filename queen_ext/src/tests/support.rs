//! The helpers the in-database tests share: one SQL query's one value, as a
//! number or as JSON; a push, an ack of what a pop delivered, and the data
//! of a pop's messages.

use pgrx::prelude::*;
use pgrx::{Json, JsonB};
use serde_json::{json, Value};

/// The `int8` that `sql` answers; 0 when it answers NULL.
pub fn n(sql: &str) -> i64 {
    Spi::get_one::<i64>(sql).unwrap().unwrap_or(0)
}

/// The `json` that `sql` answers; `null` when it answers NULL.
pub fn js(sql: &str) -> Value {
    Spi::get_one::<Json>(sql)
        .unwrap()
        .map(|Json(v)| v)
        .unwrap_or(Value::Null)
}

/// What `queen.push(items)` answers.
pub fn push(items: Value) -> Value {
    Spi::get_one_with_args::<Json>("SELECT queen.push($1)", &[JsonB(items).into()])
        .unwrap()
        .unwrap()
        .0
}

/// The data of each message of a pop's answer, in order.
pub fn datas(popped: &Value) -> Vec<Value> {
    popped["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["data"].clone())
        .collect()
}

/// What `queen.ack(body)` answers.
pub fn ack(body: Value) -> Value {
    Spi::get_one_with_args::<Json>("SELECT queen.ack($1)", &[JsonB(body).into()])
        .unwrap()
        .unwrap()
        .0
}

/// Acks every message of a pop's answer with `status`, for `group`.
pub fn ack_all(popped: &Value, status: &str, group: Option<&str>) -> Value {
    let acks: Vec<Value> = popped["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                   "leaseId": m["leaseId"], "status": status, "consumerGroup": group})
        })
        .collect();
    ack(Value::Array(acks))
}
