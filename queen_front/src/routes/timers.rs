//! Timers: scheduling (and every other operation in a body), the cancel
//! route, and the reads: one timer by key, a queue's timers page by page.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::json;

use super::call::{call, json_body, ok, pass, Answer};
use crate::access::{Authorized, ReadOnly, ReadWrite, WriteOnly};
use crate::body::JsonBody;
use crate::query::{number, text, Params};
use crate::state::AppState;

/// The timer routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/timers", post(timers))
        .route("/api/v1/timers/{queue}", get(list_timers))
        .route(
            "/api/v1/timers/{queue}/{*timer_key}",
            get(peek_timer).delete(cancel_timer),
        )
}

/// Timer operations in one body: schedule and the rest.
pub async fn timers(
    _: Authorized<WriteOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    pass(&state, "SELECT queen.timers($1::jsonb)", &[&body]).await
}

/// The query of the cancel route.
#[derive(Deserialize)]
pub struct CancelQuery {
    /// Passed on as given (null when absent).
    txn: Option<String>,
}

/// The cancel route: never refused by the scheduling switch.
pub async fn cancel_timer(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path((queue, timer_key)): Path<(String, String)>,
    Params(q): Params<CancelQuery>,
) -> Answer {
    let cancel = json!({"op": "cancel", "queue": queue, "timerKey": timer_key, "txn": q.txn});
    let body = json!({"operations": [cancel]});
    let answer = call(&state, "SELECT queen.timers($1::jsonb)", &[&body]).await?;
    ok(answer["results"][0].clone())
}

/// One pending timer: 200 with `found` true or false.
pub async fn peek_timer(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path((queue, timer_key)): Path<(String, String)>,
) -> Answer {
    pass(
        &state,
        "SELECT queen.timer_peek($1, $2)",
        &[&queue, &timer_key],
    )
    .await
}

/// The query of the timers list: the key to list after, and a page size
/// (clamped by the extension, never refused unless not a number).
#[derive(Deserialize)]
pub struct ListQuery {
    after: Option<String>,
    limit: Option<String>,
}

/// A page of a queue's pending timers by key.
pub async fn list_timers(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
    Params(q): Params<ListQuery>,
) -> Answer {
    let after = text(&q.after).map(str::to_owned);
    let limit = number("limit", &q.limit)?;
    pass(
        &state,
        "SELECT queen.timers_list($1, $2, $3)",
        &[&queue, &after, &limit],
    )
    .await
}
