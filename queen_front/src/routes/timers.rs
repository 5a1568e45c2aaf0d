//! Timers: scheduling (and every other operation in a body) and the cancel
//! route.

use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::json;

use super::call::{call, json_body, ok, Answer};
use crate::access::{Authorized, ReadWrite, WriteOnly};
use crate::body::JsonBody;
use crate::query::Params;
use crate::state::AppState;

/// Timer operations in one body: schedule and the rest.
pub async fn timers(
    _: Authorized<WriteOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    ok(call(&state, "SELECT queen.timers($1::jsonb)", &[&body]).await?)
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
