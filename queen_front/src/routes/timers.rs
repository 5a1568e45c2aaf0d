//! Timers: scheduling (and every other operation in a body) and the cancel
//! route.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use serde_json::json;

use super::call::{call, json_body, ok, Answer};
use crate::body::JsonBody;
use crate::state::AppState;

pub async fn timers(State(state): State<AppState>, JsonBody(body): JsonBody) -> Answer {
    let body = json_body(&body)?;
    ok(call(&state, "SELECT queen.timers($1::jsonb)", &[&body]).await?)
}

/// The cancel route: never refused by the scheduling switch.
pub async fn cancel_timer(
    State(state): State<AppState>,
    Path((queue, timer_key)): Path<(String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let body = json!({"operations": [{"op": "cancel", "queue": queue, "timerKey": timer_key, "txn": params.get("txn")}]});
    let answer = call(&state, "SELECT queen.timers($1::jsonb)", &[&body]).await?;
    ok(answer["results"][0].clone())
}
