//! Consumer groups: list, look at one, the lagging cursors, delete
//! (everywhere or on one queue), seek (a queue or one partition), the
//! subscription, and where a group reads; answered as Queen's server
//! answers them.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::{call, json_body, ok, pass, Answer};
use crate::access::{Admin, Authorized, ReadOnly, ReadWrite};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::query::{number, qbool, Params};
use crate::state::AppState;

/// The consumer-group routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/consumer-groups", get(consumer_groups))
        // Static segments: matched before `{group}`.
        .route("/api/v1/consumer-groups/lagging", get(lagging))
        .route("/api/v1/consumer-groups/positions", post(positions))
        .route(
            "/api/v1/consumer-groups/{group}",
            get(consumer_group).delete(delete_consumer_group),
        )
        .route(
            "/api/v1/consumer-groups/{group}/queues/{queue}",
            axum::routing::delete(delete_consumer_group_on_queue),
        )
        .route(
            "/api/v1/consumer-groups/{group}/queues/{queue}/seek",
            post(seek_consumer_group),
        )
        .route(
            "/api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek",
            post(seek_partition),
        )
        .route(
            "/api/v1/consumer-groups/{group}/subscription",
            post(consumer_group_subscription),
        )
}

/// Every consumer group on every queue: a bare array, one element per
/// (group, queue), queue mode included.
pub async fn consumer_groups(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.consumer_groups_summary()", &[]).await
}

/// One consumer group: an object keyed by queue, `{}` for an unknown group.
pub async fn consumer_group(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(group): Path<String>,
) -> Answer {
    pass(&state, "SELECT queen.consumer_group_detail($1)", &[&group]).await
}

/// The query of the lagging cursors.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaggingQuery {
    /// How old the oldest unconsumed message must be (3600 when absent).
    min_lag_seconds: Option<String>,
}

/// The cursors lagging by at least `minLagSeconds`, most lagging first.
pub async fn lagging(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<LaggingQuery>,
) -> Answer {
    let min = number("minLagSeconds", &q.min_lag_seconds)?.unwrap_or(3600);
    pass(&state, "SELECT queen.consumer_groups_lagging($1)", &[&min]).await
}

/// Where a group reads (`{consumerGroup, entries?}`).
pub async fn positions(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    pass(
        &state,
        "SELECT queen.consumer_group_positions($1::jsonb)",
        &[&body],
    )
    .await
}

/// The query of the delete routes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteQuery {
    /// `false`, `0` or `no` keeps the subscription; `true`, `1`, `yes` or
    /// absent drops it too.
    delete_metadata: Option<String>,
}

/// Deletes a group's cursors everywhere or on one queue; `deleteMetadata`
/// (default true) drops its subscription too. Answered as Queen's server
/// answers it (`deletedPartitions`, `metadataDeleted`, `queueName`); an
/// unknown queue deletes nothing and is no error.
async fn delete_group(
    state: &AppState,
    group: &str,
    queue: Option<String>,
    q: &DeleteQuery,
) -> Answer {
    let metadata = qbool("deleteMetadata", &q.delete_metadata, true)?;
    let deleted = match call(
        state,
        "SELECT queen.consumer_group_delete($1, $2, $3)",
        &[&group, &queue, &metadata],
    )
    .await
    {
        Ok(answer) => answer["partitionsDeleted"].as_i64().unwrap_or(0),
        // Queen's server deletes nothing on an unknown queue, and says so
        // as a success.
        Err(e) if queue.is_some() && e.sqlstate.as_deref() == Some("42704") => 0,
        Err(e) => return Err(e),
    };
    let mut answer = json!({"success": true, "consumerGroup": group,
                            "deletedPartitions": deleted, "metadataDeleted": metadata});
    if let Some(queue) = queue {
        answer["queueName"] = json!(queue);
    }
    ok(answer)
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
    pass(
        &state,
        "SELECT queen.consumer_group_seek_queue($1, $2, $3::jsonb)",
        &[&group, &queue, &options],
    )
    .await
}

/// Moves a group's cursor on one partition; an empty body means to the end.
pub async fn seek_partition(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path((group, queue, partition)): Path<(String, String, String)>,
    JsonBody(body): JsonBody,
) -> Answer {
    let options = json_body(&body)?;
    pass(
        &state,
        "SELECT queen.consumer_group_seek_partition($1, $2, $3, $4::jsonb)",
        &[&group, &queue, &partition, &options],
    )
    .await
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
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::bad_request("subscriptionTimestamp is required"))?
        .to_owned();
    let updated = match call(
        &state,
        "SELECT queen.consumer_group_subscription($1, $2)",
        &[&group, &ts],
    )
    .await
    {
        Ok(answer) => answer["queues"].as_i64().unwrap_or(0),
        // Queen's server answers a group with no subscription to change as
        // a success that updated nothing.
        Err(e) if e.sqlstate.as_deref() == Some("42704") => 0,
        Err(e) => return Err(e),
    };
    ok(
        json!({"success": true, "consumerGroup": group, "newTimestamp": ts,
              "rowsUpdated": updated}),
    )
}
