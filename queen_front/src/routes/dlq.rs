//! The dead-letter queue: list and retry (one message is read and deleted
//! by `inspect`).

use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::json;

use super::call::{call, ok, Answer};
use crate::access::{Authorized, ReadOnly, ReadWrite};
use crate::error::ApiError;
use crate::query::{number, text, Params};
use crate::state::AppState;

/// The query of the dead-letter list: filters, and a page.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DlqQuery {
    queue: Option<String>,
    consumer_group: Option<String>,
    partition: Option<String>,
    from: Option<String>,
    to: Option<String>,
    limit: Option<String>,
    offset: Option<String>,
}

/// The dead letters matching the query, a page of them.
pub async fn dlq(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<DlqQuery>,
) -> Answer {
    let mut options = json!({});
    for (key, value) in [
        ("queue", &q.queue),
        ("consumerGroup", &q.consumer_group),
        ("partition", &q.partition),
        ("from", &q.from),
        ("to", &q.to),
    ] {
        if let Some(v) = text(value) {
            options[key] = json!(v);
        }
    }
    for (key, value) in [("limit", &q.limit), ("offset", &q.offset)] {
        if let Some(n) = number(key, value)? {
            options[key] = json!(n);
        }
    }
    ok(call(&state, "SELECT queen.dlq_messages($1::jsonb)", &[&options]).await?)
}

fn partition_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::bad_request(format!("partitionId: {raw:?} is not a partition id")))
}

/// Puts one dead letter back to be consumed again; wakes the long polls.
pub async fn retry_message(
    _: Authorized<ReadWrite>,
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
