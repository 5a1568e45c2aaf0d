//! The dead-letter queue: list, look at one, retry, delete.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use serde_json::json;

use super::call::{call, number, ok, Answer};
use crate::error::ApiError;
use crate::state::AppState;

pub async fn dlq(
    State(state): State<AppState>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let mut options = json!({});
    for key in ["queue", "consumerGroup", "partition", "from", "to"] {
        if let Some(v) = params.get(key).filter(|v| !v.is_empty()) {
            options[key] = json!(v);
        }
    }
    for key in ["limit", "offset"] {
        if let Some(n) = number(&params, key)? {
            options[key] = json!(n);
        }
    }
    ok(call(&state, "SELECT queen.dlq_messages($1::jsonb)", &[&options]).await?)
}

pub fn partition_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::bad_request(format!("partitionId: {raw:?} is not a partition id")))
}

pub async fn get_message(
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let pid = partition_id(&pid)?;
    ok(call(
        &state,
        "SELECT queen.get_dlq_message($1, $2)",
        &[&pid, &txn],
    )
    .await?)
}

pub async fn delete_message(
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let pid = partition_id(&pid)?;
    ok(call(
        &state,
        "SELECT queen.delete_dlq_message($1, $2)",
        &[&pid, &txn],
    )
    .await?)
}

pub async fn retry_message(
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let pid = partition_id(&pid)?;
    let answer = call(
        &state,
        "SELECT queen.retry_dlq_message($1, $2)",
        &[&pid, &txn],
    )
    .await?;
    state.waiters.wake_queue("");
    ok(answer)
}
