//! Queues: configure and delete (the resource views are in `resources`).

use axum::extract::{Path, State};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use super::call::{json_body, ok, pass, Answer};
use crate::access::{Admin, Authorized, ReadWrite};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;

/// The routes of this file: configure. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/configure", post(configure))
}

/// Creates or changes a queue: `options` (with `namespace` and `task`
/// from the body's top level), merged unless `mode` says otherwise.
pub async fn configure(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    let queue = body
        .get("queue")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::bad_request("queue: is required"))?
        .to_owned();
    let mut options = body.get("options").cloned().unwrap_or(json!({}));
    if !options.is_object() {
        return Err(ApiError::bad_request("options: must be a JSON object"));
    }
    for key in ["namespace", "task"] {
        if let Some(v) = body.get(key).filter(|v| !v.is_null()) {
            options[key] = v.clone();
        }
    }
    let mode = body
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or("merge")
        .to_owned();
    pass(
        &state,
        "SELECT queen.configure($1, $2::jsonb, $3)",
        &[&queue, &options, &mode],
    )
    .await
}

/// Deletes a queue; a missing one is a 200 with `existed: false`, as
/// Queen's server answers it.
pub async fn delete_queue(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> Answer {
    match pass(&state, "SELECT queen.queue_delete($1)", &[&queue]).await {
        Err(e) if e.sqlstate.as_deref() == Some("42704") => ok(json!({
            "success": true, "deleted": false, "queue": queue, "existed": false,
            "message": "Queue not found, nothing was deleted"
        })),
        answer => answer,
    }
}
