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

/// Every consumer group on every queue as Queen's server lists them: a
/// bare array, one element per (group, queue), queue mode included, by
/// group then queue.
pub async fn consumer_groups(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    let list = call(&state, "SELECT queen.consumer_groups_list()", &[]).await?;
    ok(Value::Array(queen_summary(&list)))
}

/// Queen's rows of `queen.consumer_groups_list()`'s answer, by group then
/// queue.
pub(super) fn queen_summary(list: &Value) -> Vec<Value> {
    let groups = list["consumerGroups"].as_array().into_iter().flatten();
    let queue_mode = list["queueMode"].as_array().into_iter().flatten();
    let entries = groups
        .flat_map(|g| {
            let name = g["consumerGroup"].as_str().unwrap_or_default().to_owned();
            let queues = g["queues"].as_array().into_iter().flatten();
            queues.map(move |q| (name.clone(), q))
        })
        .chain(queue_mode.map(|q| (QUEUE_MODE.to_owned(), q)));
    let mut rows: Vec<Value> = entries
        .map(|(name, q)| {
            json!({
                "name": name, "topics": [q["queue"]], "queueName": q["queue"],
                "members": q["members"], "partitionCursors": q["partitions"],
                "partitionsWithLag": q["partitionsWithLag"], "totalLag": q["lag"],
                "maxTimeLag": q["maxTimeLag"], "state": q["state"], "storage": "segments",
                "subscriptionMode": q["subscriptionMode"],
                "subscriptionTimestamp": q["subscriptionTimestamp"],
                "subscriptionCreatedAt": q["subscriptionCreatedAt"], "conflation": q["conflation"],
            })
        })
        .collect();
    let key = |r: &Value| {
        (
            r["name"].as_str().unwrap_or_default().to_owned(),
            r["queueName"].as_str().unwrap_or_default().to_owned(),
        )
    };
    rows.sort_by_key(key);
    rows
}

/// The group name Queen's server lists the pops without a group under.
const QUEUE_MODE: &str = "__QUEUE_MODE__";

/// One consumer group as Queen's server details it: an object keyed by
/// queue, each with its partitions' lag; `{}` for an unknown group.
pub async fn consumer_group(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(group): Path<String>,
) -> Answer {
    let got = match call(&state, "SELECT queen.consumer_group_get($1)", &[&group]).await {
        Ok(got) => got,
        Err(e) if e.sqlstate.as_deref() == Some("42704") => return ok(json!({})),
        Err(e) => return Err(e),
    };
    let mut out = serde_json::Map::new();
    for p in got["partitions"].as_array().into_iter().flatten() {
        let queue = p["queue"].as_str().unwrap_or_default().to_owned();
        let entry = out
            .entry(queue)
            .or_insert_with(|| json!({"conflation": p["conflation"], "partitions": []}));
        let committed = p["committedOffset"].as_i64().unwrap_or(-1);
        entry["partitions"].as_array_mut().unwrap().push(json!({
            "partition": p["partition"], "partitionId": p["partitionId"],
            "workerId": null, "lastConsumedAt": null, "totalConsumed": (committed + 1).max(0),
            "offsetLag": p["lag"], "timeLagSeconds": p["timeLagSeconds"],
            "leaseActive": p["leased"], "committedOffset": committed,
            "lastOffset": p["lastOffset"],
        }));
    }
    ok(Value::Object(out))
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

/// Moves a group's cursors on a queue; the body holds where to. Answered
/// as Queen's server answers it (`queueName`, `seekToEnd`,
/// `targetTimestamp`, `partitionsUpdated`); a queue that does not exist or
/// has no partition is 404.
pub async fn seek_consumer_group(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path((group, queue)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Answer {
    let options = json_body(&body)?;
    let moved = match call(
        &state,
        "SELECT queen.consumer_group_seek($1, $2, $3::jsonb)",
        &[&group, &queue, &options],
    )
    .await
    {
        Ok(answer) if answer["partitions"].as_i64().unwrap_or(0) > 0 => answer,
        Ok(_) => return Err(no_partitions(&queue)),
        Err(e) if e.sqlstate.as_deref() == Some("42704") => return Err(no_partitions(&queue)),
        Err(e) => return Err(e),
    };
    ok(json!({
        "success": true, "consumerGroup": group, "queueName": queue,
        "seekToEnd": moved["seekToEnd"], "targetTimestamp": moved["targetTimestamp"],
        "partitionsUpdated": moved["partitions"],
    }))
}

/// Queen's answer to a seek on a queue with no partition to move, as the
/// database's refusal of an unknown object reads (SQLSTATE 42704).
fn no_partitions(queue: &str) -> ApiError {
    ApiError {
        sqlstate: Some("42704".into()),
        ..ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            "not_found",
            format!("queue {queue:?}: Queue not found or has no partitions"),
        )
    }
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
