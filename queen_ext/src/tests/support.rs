//! The helpers the in-database tests share: one SQL query's one value, as a
//! number or as JSON.

use pgrx::prelude::*;
use pgrx::Json;
use serde_json::Value;

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
