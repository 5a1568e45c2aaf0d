//! The dead-letter queue: list, move back into the log (by row id or by
//! message), purge a queue's (one message is read and deleted by
//! `inspect`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::{call, json_body, ok, pass, Answer};
use crate::access::{Admin, Authorized, ReadOnly, ReadWrite};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::query::{number, text, Params};
use crate::state::AppState;

/// The dead-letter routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/dlq", get(dlq).delete(purge))
        .route("/api/v1/dlq/{id}/replay", post(replay))
        .route(
            "/api/v1/messages/{partition_id}/{transaction_id}/retry",
            post(retry_message),
        )
}

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
    pass(&state, "SELECT queen.dlq_list($1::jsonb)", &[&options]).await
}

/// A move that found nothing to move: the 404 with the keys Queen's server
/// adds to it (`success: false` and the address or id asked).
fn not_moved(e: ApiError, extra: Value) -> Answer {
    if e.status != StatusCode::NOT_FOUND {
        return Err(e);
    }
    let mut body = json!({"success": false, "error": e.message, "code": e.code});
    if let (Some(b), Some(x)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(x.clone());
    }
    Ok((StatusCode::NOT_FOUND, Json(body)).into_response())
}

/// Moves the newest dead letter of one message back into its queue and
/// partition; wakes the long polls. A partition id that is not one is a 404,
/// as a message that is not there.
pub async fn retry_message(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let gone = json!({"partitionId": pid, "transactionId": txn,
                      "message": "Message not found"});
    let Ok(pid_n) = pid.parse::<i64>() else {
        let e = ApiError::new(StatusCode::NOT_FOUND, "not_found", "Message not found");
        return not_moved(e, gone);
    };
    match call(
        &state,
        "SELECT queen.dlq_retry_message($1, $2)",
        &[&pid_n, &txn],
    )
    .await
    {
        Ok(answer) => {
            state.waiters.wake_queue("");
            ok(answer)
        }
        Err(e) => not_moved(e, gone),
    }
}

/// Moves one dead letter, by row id, back into its queue and partition (or
/// the body's `queue` / `partition`); wakes the long polls. A second replay
/// of the same id is a 404 `gone`.
pub async fn replay(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Answer {
    let options = json_body(&body)?;
    let gone = json!({"result": "gone", "dlqId": id});
    let Ok(id_n) = id.parse::<i64>() else {
        let e = ApiError::new(StatusCode::NOT_FOUND, "not_found", "dead letter not found");
        return not_moved(e, gone);
    };
    match call(
        &state,
        "SELECT queen.dlq_replay($1, $2::jsonb)",
        &[&id_n, &options],
    )
    .await
    {
        Ok(answer) => {
            state.waiters.wake_queue("");
            ok(answer)
        }
        Err(e) => not_moved(e, gone),
    }
}

/// The query of the purge.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PurgeQuery {
    queue: Option<String>,
    consumer_group: Option<String>,
}

/// Deletes a queue's dead letters (one group's, with `consumerGroup`),
/// counted into its `pruned_failed_count`.
pub async fn purge(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    Params(q): Params<PurgeQuery>,
) -> Answer {
    let Some(queue) = text(&q.queue).map(str::to_owned) else {
        return Err(ApiError::bad_request("queue is required"));
    };
    let group = text(&q.consumer_group).map(str::to_owned);
    pass(&state, "SELECT queen.dlq_purge($1, $2)", &[&queue, &group]).await
}
