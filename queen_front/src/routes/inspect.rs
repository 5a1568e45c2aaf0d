//! The message readers and the delete: the listing of a window of
//! messages, one message by its address (live or dead-lettered), and the
//! deletion of a message, with Queen's bodies.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::json;

use super::call::{call, call_as, json_text, ok, pass, Answer, RawJson};
use crate::access::{Authorized, ReadOnly, ReadWrite};
use crate::error::ApiError;
use crate::query::{number, text, Params};
use crate::state::AppState;

/// The message routes: one message, its deletion, the listing. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/messages/{partition_id}/{transaction_id}",
            axum::routing::get(get).delete(delete),
        )
        .route("/api/v1/messages", axum::routing::get(list))
}

/// What a message answer says when there is no such message.
const NOT_FOUND: &str = "Message not found";

/// The query of the message listing.
#[derive(Deserialize)]
pub struct ListQuery {
    queue: Option<String>,
    partition: Option<String>,
    namespace: Option<String>,
    ns: Option<String>,
    task: Option<String>,
    status: Option<String>,
    from: Option<String>,
    to: Option<String>,
    limit: Option<String>,
    offset: Option<String>,
    /// Where an earlier page cut short by the listing's bounds left off.
    cursor: Option<String>,
}

/// The messages of a window (the last hour unless `from`/`to` say),
/// newest first, each with its status.
pub async fn list(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<ListQuery>,
) -> Answer {
    let mut filters = json!({});
    for (key, value) in [
        ("queue", &q.queue),
        ("partition", &q.partition),
        ("namespace", &q.namespace),
        ("ns", &q.ns),
        ("task", &q.task),
        ("status", &q.status),
        ("from", &q.from),
        ("to", &q.to),
        ("cursor", &q.cursor),
    ] {
        if let Some(v) = text(value) {
            filters[key] = json!(v);
        }
    }
    for (key, value) in [("limit", &q.limit), ("offset", &q.offset)] {
        if let Some(n) = number(key, value)? {
            filters[key] = json!(n);
        }
    }
    pass(&state, "SELECT queen.messages_list($1::jsonb)", &[&filters]).await
}

/// A partition id from the path: one that is not a number names no
/// partition, so no message (404, as for an unknown one).
fn partition_id(raw: &str) -> Option<i64> {
    raw.parse().ok()
}

fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", NOT_FOUND)
}

/// One message, live or dead-lettered; 404 `{"error": "Message not found"}`.
pub async fn get(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let Some(pid) = partition_id(&pid) else {
        return Err(not_found());
    };
    match call_as::<RawJson>(&state, "SELECT queen.message_get($1, $2)", &[&pid, &txn]).await {
        Ok(answer) => json_text(answer.0),
        Err(e) if e.status == StatusCode::NOT_FOUND => Err(not_found()),
        Err(e) => Err(e),
    }
}

/// Deletes a message (live: never delivered again; and its dead letters).
/// 404 carries Queen's `success`, `partitionId`, `transactionId`, `error`
/// and `message`.
pub async fn delete(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path((raw_pid, txn)): Path<(String, String)>,
) -> Answer {
    let missing = || {
        let body = json!({
            "success": false,
            "partitionId": raw_pid,
            "transactionId": txn,
            "error": NOT_FOUND,
            "code": "not_found",
            "message": "No live message or dead letter at this address",
        });
        Ok((StatusCode::NOT_FOUND, Json(body)).into_response())
    };
    let Some(pid) = partition_id(&raw_pid) else {
        return missing();
    };
    match call(&state, "SELECT queen.message_delete($1, $2)", &[&pid, &txn]).await {
        Ok(answer) => ok(answer),
        Err(e) if e.status == StatusCode::NOT_FOUND => missing(),
        Err(e) => Err(e),
    }
}
