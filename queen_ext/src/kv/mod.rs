//! Key/value state with a mandatory expiry, and locks built on it.
//!
//! `queen.kv(body)` takes Queen's KV body (`{"operations": [...]}`) and
//! answers `{"results": [...]}`, index-aligned. The scalar functions are
//! conveniences over the same ops. Usage and quota are per namespace.

pub mod locks;
pub mod ops;
pub mod parse;
pub mod prune;
pub mod store;
pub mod usage;

use serde_json::{json, Value};

/// The answer of a KV call, with the verdict of a required op that stopped it.
pub fn answer(a: store::Answer, index_base: usize) -> Value {
    match a.failed {
        None => json!({"success": true, "results": a.results}),
        Some(i) => {
            let r = &a.results[i];
            json!({
                "success": false,
                "reason": "kv_precondition",
                "failedIndex": index_base + i,
                "kvReason": r["reason"],
                "version": r.get("version").cloned().unwrap_or(Value::Null),
                "value": r.get("value").cloned().unwrap_or(Value::Null),
                "results": a.results,
            })
        }
    }
}
