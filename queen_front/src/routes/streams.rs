//! Streaming queries: the three routes of the queen-mq streaming SDK
//! (`/streams/v1/...`) and the administrator's listing and deletion of
//! queries. Each is one call to the extension's `queen.stream_*`.

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

/// The streaming queries' routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/streams/v1/queries", post(register))
        .route("/streams/v1/state/get", post(state_get))
        .route("/streams/v1/cycle", post(cycle))
        .route("/api/v1/resources/streams", get(list))
        .route(
            "/api/v1/resources/streams/{name}",
            axum::routing::delete(delete),
        )
}

/// Registers a query, or finds it; a changed operator chain without
/// `reset` is a 409 naming the query.
pub async fn register(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    let mut answer = call(&state, "SELECT queen.stream_register($1::jsonb)", &[&body]).await?;
    if answer["conflict"] == json!(true) {
        if let Some(o) = answer.as_object_mut() {
            o.remove("conflict");
        }
        return Ok((StatusCode::CONFLICT, Json(answer)).into_response());
    }
    ok(answer)
}

/// A query's state rows in one source partition.
pub async fn state_get(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    required_ids(&body)?;
    pass(&state, "SELECT queen.stream_state_get($1::jsonb)", &[&body]).await
}

/// One cycle: its state writes, pushes and ack, all or nothing. Once the
/// body names its query and partition, the answer is a 200 whether the
/// cycle was applied or refused (`success` false, with the reason and
/// nothing applied); a failure of the server itself is answered as every
/// route answers it, for the client to retry.
pub async fn cycle(
    caller: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    required_ids(&body)?;
    let producer = caller.subject;
    match call(
        &state,
        "SELECT queen.stream_cycle($1::jsonb, $2)",
        &[&body, &producer],
    )
    .await
    {
        Ok(answer) => {
            let sinks = body["push_items"].as_array().into_iter().flatten();
            for queue in sinks.filter_map(|i| i["queue"].as_str()) {
                state.waiters.wake_queue(queue);
            }
            ok(answer)
        }
        Err(e) if e.sqlstate.as_deref().is_some_and(refuses_the_cycle) => ok(refused(&body, &e)),
        Err(e) => Err(e),
    }
}

/// Whether an ERROR refuses the cycle for good (its lease, its query or
/// partition, its body, a bound), answered 200 `success` false; anything
/// else (a lost race, a pause, the server) is answered as every route
/// answers it, for the client to retry.
fn refuses_the_cycle(sqlstate: &str) -> bool {
    matches!(sqlstate, "55000" | "42704" | "42804" | "54000") || sqlstate.starts_with("22")
}

/// The answer to a cycle the extension refused: nothing of it applied.
fn refused(body: &Value, e: &ApiError) -> Value {
    json!({
        "success": false,
        "query_id": body["query_id"],
        "partition_id": body["partition_id"],
        "queueName": null,
        "state_ops_applied": 0,
        "push_results": [],
        "ack_result": null,
        "error": e.message,
        "code": e.code,
        "sqlstate": e.sqlstate,
    })
}

/// The calls after a registration name their query and source partition:
/// a body without them is a 400.
fn required_ids(body: &Value) -> Result<(), ApiError> {
    if !body["query_id"].is_string() {
        return Err(ApiError::bad_request("query_id is required"));
    }
    if !(body["partition_id"].is_string() || body["partition_id"].is_number()) {
        return Err(ApiError::bad_request("partition_id is required"));
    }
    Ok(())
}

/// The query of the listing: the name to list after, a page size.
#[derive(Deserialize)]
pub struct ListQuery {
    after: Option<String>,
    limit: Option<String>,
}

/// The registered queries, a page at a time, each with its state counted.
pub async fn list(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<ListQuery>,
) -> Answer {
    let after = text(&q.after).map(str::to_owned);
    let limit = number("limit", &q.limit)?.map(|l| l.clamp(1, 1000) as i32);
    pass(
        &state,
        "SELECT queen.stream_queries($1, COALESCE($2, 100))",
        &[&after, &limit],
    )
    .await
}

/// Deletes a query and its state.
pub async fn delete(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Answer {
    pass(&state, "SELECT queen.stream_delete($1)", &[&name]).await
}
