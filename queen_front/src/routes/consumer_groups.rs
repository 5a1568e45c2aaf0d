//! Consumer groups: list, look at one, delete (everywhere or on one
//! queue), seek, subscription.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use serde_json::Value;

use super::call::{call, json_body, ok, Answer};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;

pub async fn consumer_groups(State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.consumer_groups_list()", &[]).await?)
}

pub async fn consumer_group(State(state): State<AppState>, Path(group): Path<String>) -> Answer {
    ok(call(&state, "SELECT queen.consumer_group_get($1)", &[&group]).await?)
}

/// Deletes a group's cursors everywhere or on one queue; `deleteMetadata`
/// (default true) drops its subscription too.
pub async fn delete_group(
    state: &AppState,
    group: &str,
    queue: Option<String>,
    params: &HashMap<String, String>,
) -> Answer {
    let metadata = params.get("deleteMetadata").is_none_or(|v| v != "false");
    ok(call(
        state,
        "SELECT queen.consumer_group_delete($1, $2, $3)",
        &[&group, &queue, &metadata],
    )
    .await?)
}

pub async fn delete_consumer_group(
    State(state): State<AppState>,
    Path(group): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    delete_group(&state, &group, None, &params).await
}

pub async fn delete_consumer_group_on_queue(
    State(state): State<AppState>,
    Path((group, queue)): Path<(String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    delete_group(&state, &group, Some(queue), &params).await
}

pub async fn seek_consumer_group(
    State(state): State<AppState>,
    Path((group, queue)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Answer {
    let options = json_body(&body)?;
    ok(call(
        &state,
        "SELECT queen.consumer_group_seek($1, $2, $3::jsonb)",
        &[&group, &queue, &options],
    )
    .await?)
}

pub async fn consumer_group_subscription(
    State(state): State<AppState>,
    Path(group): Path<String>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    let ts = body
        .get("subscriptionTimestamp")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::bad_request("subscriptionTimestamp: is required"))?
        .to_owned();
    ok(call(
        &state,
        "SELECT queen.consumer_group_subscription($1, $2)",
        &[&group, &ts],
    )
    .await?)
}
