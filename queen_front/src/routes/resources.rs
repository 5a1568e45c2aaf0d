//! Resources and reads by offset: queues with their counts, one queue, a
//! queue's depth, namespaces, tasks, the partitions backlog, the KV
//! browser, fetch and the partitions changed since a time. Every answer is the extension's,
//! passed on.

use axum::extract::{Path, State};
use serde::Deserialize;

use super::call::{call, json_body, ok, Answer};
use crate::access::{Authorized, ReadOnly};
use crate::body::JsonBody;
use crate::query::{number, text, Params};
use crate::state::AppState;

/// Every queue with its counts. Query parameters are ignored, as Queen's
/// server ignores them.
pub async fn queues(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.resource_queues()", &[]).await?)
}

/// One queue with its options, partitions and totals; 404 when unknown.
pub async fn queue(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> Answer {
    ok(call(&state, "SELECT queen.resource_queue($1)", &[&queue]).await?)
}

/// The query of the depth route.
#[derive(Deserialize)]
pub struct DepthQuery {
    group: Option<String>,
}

/// A queue's depth under a group's cursor, or the worst one.
pub async fn depth(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
    Params(q): Params<DepthQuery>,
) -> Answer {
    let group = text(&q.group).map(str::to_owned);
    ok(call(
        &state,
        "SELECT queen.queue_depth($1, $2)",
        &[&queue, &group],
    )
    .await?)
}

/// The namespaces queues carry.
pub async fn namespaces(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.resource_namespaces()", &[]).await?)
}

/// The tasks queues carry.
pub async fn tasks(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.resource_tasks()", &[]).await?)
}

/// The query of the partitions backlog.
#[derive(Deserialize)]
pub struct BacklogQuery {
    queue: Option<String>,
    limit: Option<String>,
}

/// The partitions holding the most pending.
pub async fn partitions(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<BacklogQuery>,
) -> Answer {
    let queue = text(&q.queue).map(str::to_owned);
    let limit = number("limit", &q.limit)?;
    ok(call(
        &state,
        "SELECT queen.partition_backlog($1, $2)",
        &[&queue, &limit],
    )
    .await?)
}

/// Records of named partitions from given offsets: no lease, no cursor.
/// The answer comes at once: a `maxWaitMs` is checked, not waited on.
pub async fn fetch(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    ok(call(&state, "SELECT queen.fetch($1::jsonb)", &[&body]).await?)
}

/// The partitions written since a time, a page per entry, and `safeTime`.
pub async fn partitions_changed(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    ok(call(
        &state,
        "SELECT queen.partitions_changed($1::jsonb)",
        &[&body],
    )
    .await?)
}

/// Every KV namespace holding a live key, with its keys.
pub async fn kv_namespaces(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.kv_namespaces()", &[]).await?)
}

/// A page of one KV namespace's keys, read-only.
pub async fn kv_list(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    ok(call(&state, "SELECT queen.kv_list($1::jsonb)", &[&body]).await?)
}
