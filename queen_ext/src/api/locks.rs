//! Locks and semaphores over the KV rows (`kv::locks`).

use pgrx::prelude::*;

use serde_json::json;

use super::kv::body_ops;
use crate::kv::locks;
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi;
use crate::wire::datum::{JsonOut, JsonbArg};

/// Locks and semaphores, Queen's locks body: `{"operations": [{"op":
/// "acquire" | "renew" | "release" | "get", "name", ...}]}`.
#[pg_extern]
fn locks(body: Option<JsonbArg>) -> JsonOut {
    let list = body_ops(body);
    let max = settings::kv_batch_max_ops();
    if list.len() > max {
        errors::program_limit(
            "operations",
            format!(
                "{} operations is more than queen.kv_batch_max_ops ({max})",
                list.len()
            ),
        );
    }
    let ops: Vec<locks::LockOp> = list
        .iter()
        .enumerate()
        .map(|(i, v)| locks::parse(v, &format!("operations[{i}]")))
        .collect();
    JsonOut::of(&spi::spi(|c| json!({"results": locks::run(c, &ops)})))
}
