//! Every SQL-callable function, thin: check the arguments, call the engine,
//! answer. One file per surface; the maintenance steps the workers call are
//! in `internal` (schema `queen_internal`), apart from the public API.

pub mod consumer_groups;
pub mod dlq;
pub mod ephemeral;
pub mod fetch;
pub mod fused;
pub mod inspect;
pub mod internal;
pub mod kv;
pub mod locks;
pub mod messages;
pub mod observe;
pub mod queues;
pub mod resources;
pub mod rights;
pub mod shard;
pub mod status;
pub mod streams;
pub mod system;
pub mod timers;

use crate::pg::errors;
use crate::wire::datum::ArgValue;
use crate::wire::datum::JsonbArg;

pub(crate) fn required_text(field: &str, v: Option<JsonbArg>) -> String {
    v.map(|JsonbArg(t)| t)
        .unwrap_or_else(|| errors::invalid(field, "is required"))
}

pub(crate) fn required(field: &str, v: Option<JsonbArg>) -> serde_json::Value {
    crate::wire::json::parse_value(field, &required_text(field, v))
}

pub(crate) fn optional(field: &str, v: Option<JsonbArg>) -> serde_json::Value {
    v.map(|a| a.value(field))
        .unwrap_or_else(|| serde_json::json!({}))
}
