//! Message traces: what a consumer records about a message while handling
//! it, and the readers (by message, by name, the names), answered in
//! Queen's snake_case keys.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::json;

use super::call::{call, json_body, ok, pass, Answer};
use crate::access::{Authorized, ReadOnly, ReadWrite};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::query::{number, Params};
use crate::state::AppState;

/// The trace routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/traces", post(record))
        .route("/api/v1/traces/names", get(names))
        .route("/api/v1/traces/by-name/{name}", get(by_name))
        .route(
            "/api/v1/traces/{partition_id}/{transaction_id}",
            get(for_message),
        )
}

/// Records a trace (the body `message.trace()` sends); 201 `{"success":
/// true, "traceId"}`.
pub async fn record(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    let answer = call(&state, "SELECT queen.trace_record($1::jsonb)", &[&body]).await?;
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// The traces of one message, oldest first; `{"traces": []}` when there are
/// none (a partition id that is not a number has none).
pub async fn for_message(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let Ok(pid) = pid.parse::<i64>() else {
        return ok(json!({"traces": []}));
    };
    pass(
        &state,
        "SELECT queen.traces_for_message($1, $2)",
        &[&pid, &txn],
    )
    .await
}

/// The page of a trace read.
#[derive(Deserialize)]
pub struct PageQuery {
    limit: Option<String>,
    offset: Option<String>,
}

/// A page's bounds as the extension takes them (a number too large for it
/// is refused there, with the setting that bounds it).
fn page(q: &PageQuery) -> Result<(Option<i32>, Option<i32>), ApiError> {
    let clamp = |n: i64| n.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    Ok((
        number("limit", &q.limit)?.map(clamp),
        number("offset", &q.offset)?.map(clamp),
    ))
}

/// One page of the traces filed under a name, oldest first.
pub async fn by_name(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(name): Path<String>,
    Params(q): Params<PageQuery>,
) -> Answer {
    let (limit, offset) = page(&q)?;
    pass(
        &state,
        "SELECT queen.traces_by_name($1, $2, $3)",
        &[&name, &limit, &offset],
    )
    .await
}

/// One page of the trace names, most recently used first.
pub async fn names(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<PageQuery>,
) -> Answer {
    let (limit, offset) = page(&q)?;
    pass(
        &state,
        "SELECT queen.trace_names($1, $2)",
        &[&limit, &offset],
    )
    .await
}
