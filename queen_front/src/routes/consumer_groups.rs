//! Consumer groups: list, look at one, delete (everywhere or on one
//! queue), seek, subscription.

use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::Value;

use super::call::{call, json_body, ok, Answer};
use crate::access::{Admin, Authorized, ReadOnly, ReadWrite};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::query::Params;
use crate::state::AppState;

/// Every consumer group.
pub async fn consumer_groups(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.consumer_groups_list()", &[]).await?)
}

/// One consumer group.
pub async fn consumer_group(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(group): Path<String>,
) -> Answer {
    ok(call(&state, "SELECT queen.consumer_group_get($1)", &[&group]).await?)
}

/// The query of the delete routes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteQuery {
    /// Anything but `false` (absent included) drops the subscription too.
    delete_metadata: Option<String>,
}

/// Deletes a group's cursors everywhere or on one queue; `deleteMetadata`
/// (default true) drops its subscription too.
async fn delete_group(
    state: &AppState,
    group: &str,
    queue: Option<String>,
    q: &DeleteQuery,
) -> Answer {
    let metadata = q.delete_metadata.as_deref().is_none_or(|v| v != "false");
    ok(call(
        state,
        "SELECT queen.consumer_group_delete($1, $2, $3)",
        &[&group, &queue, &metadata],
    )
    .await?)
}

/// Deletes a group on every queue.
pub async fn delete_consumer_group(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    Path(group): Path<String>,
    Params(q): Params<DeleteQuery>,
) -> Answer {
    delete_group(&state, &group, None, &q).await
}

/// Deletes a group on one queue.
pub async fn delete_consumer_group_on_queue(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    Path((group, queue)): Path<(String, String)>,
    Params(q): Params<DeleteQuery>,
) -> Answer {
    delete_group(&state, &group, Some(queue), &q).await
}

/// Moves a group's cursors on a queue; the body holds where to.
pub async fn seek_consumer_group(
    _: Authorized<ReadWrite>,
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

/// Sets where a group's subscription starts (`subscriptionTimestamp`).
pub async fn consumer_group_subscription(
    _: Authorized<ReadWrite>,
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
