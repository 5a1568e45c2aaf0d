//! Resources and reads by offset: queues with their counts, one queue, a
//! queue's depth, namespaces, tasks, the partitions backlog, the KV
//! browser, fetch and the partitions changed since a time. Every answer is the extension's,
//! passed on; the queues and one queue in Queen's shapes, made from
//! `queen.queues_list` and `queen.queue_get`.

use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::{call, json_body, ok, pass, rows, Answer};
use crate::access::{Authorized, ReadOnly};
use crate::body::JsonBody;
use crate::longpoll::Key;
use crate::query::{number, text, Params};
use crate::state::AppState;

/// The resource views, the KV browser, reads by offset, and a queue's deletion. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/resources/queues", get(queues))
        .route(
            "/api/v1/resources/queues/{queue}",
            get(queue).delete(super::queues::delete_queue),
        )
        .route("/api/v1/resources/queues/{queue}/depth", get(depth))
        .route("/api/v1/resources/queues/{queue}/retention", get(retention))
        .route("/api/v1/resources/queues/{queue}/counts", get(counts))
        .route("/api/v1/resources/sweeper", get(sweeper))
        .route("/api/v1/resources/maintenance", get(maintenance))
        .route("/api/v1/resources/kv/usage", get(kv_usage))
        .route("/api/v1/resources/namespaces", get(namespaces))
        .route("/api/v1/resources/tasks", get(tasks))
        .route("/api/v1/resources/partitions", get(partitions))
        .route("/api/v1/resources/kv/namespaces", get(kv_namespaces))
        .route("/api/v1/resources/kv/list", post(kv_list))
        .route("/api/v1/resources/rights", get(rights))
        .route("/api/v1/fetch", post(fetch))
        .route("/api/v1/partitions/changed", post(partitions_changed))
}

/// Every queue with its counts, newest first, in Queen's shape. Query
/// parameters are ignored, as Queen's server ignores them.
pub async fn queues(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    let sql = r#"SELECT queen.queues_list('{"order": "newest"}')"#;
    ok(queen_queues(&call(&state, sql, &[]).await?))
}

/// Queen's queue list from `queen.queues_list`'s: per queue `id`, `name`,
/// `namespace`, `task`, `createdAt`, `partitions`, `retainedBytes`,
/// `messages: {total, pending, processing}` (under the slowest cursor) and
/// `segments`; the KV and timer rows stored.
fn queen_queues(list: &Value) -> Value {
    let queues: Vec<Value> = rows(list, "queues")
        .iter()
        .map(|q| {
            let slowest = &q["slowestCursor"];
            json!({
                "id": q["id"],
                "name": q["name"],
                "namespace": q["namespace"],
                "task": q["task"],
                "createdAt": q["createdAt"],
                "partitions": q["partitions"],
                "retainedBytes": q["retainedBytes"],
                "messages": {"total": q["messages"], "pending": slowest["pending"],
                             "processing": slowest["processing"]},
                "segments": q["segments"],
            })
        })
        .collect();
    json!({
        "queues": queues,
        "kvRows": list["kvRows"],
        "kvBytes": list["kvBytes"],
        "timerRows": list["timerRows"],
        "timerBytes": list["timerBytes"],
    })
}

/// One queue with its options, partitions and totals, in Queen's shape;
/// 404 when unknown.
pub async fn queue(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> Answer {
    let one = call(&state, "SELECT queen.queue_get($1)", &[&queue]).await?;
    ok(queen_queue(&one))
}

/// Queen's stats of a partition, or totals of a queue, of
/// `queen.queue_get`: its counts under the slowest cursor; `failed` is
/// null, the dead letters are `deadLetter`.
fn stats(counted: &Value) -> Value {
    let slowest = &counted["slowestCursor"];
    json!({
        "total": counted["messages"],
        "pending": slowest["pending"],
        "processing": slowest["processing"],
        "completed": slowest["completed"],
        "failed": null,
        "deadLetter": counted["failed"],
    })
}

/// Queen's one queue from `queen.queue_get`'s: `id`, `name`, `namespace`,
/// `task`, `createdAt`, `options`, `partitions` (each with `stats`,
/// `lastOffset`, `logStart`, `oldestMessage`, `newestMessage`), `totals`,
/// `retainedBytes` and `segments`.
fn queen_queue(one: &Value) -> Value {
    let partitions: Vec<Value> = rows(one, "partitions")
        .iter()
        .map(|p| {
            json!({
                "id": p["id"],
                "name": p["name"],
                "createdAt": p["createdAt"],
                "stats": stats(p),
                "lastOffset": p["lastOffset"],
                "logStart": p["logStart"],
                "oldestMessage": p["oldestMessage"],
                "newestMessage": p["newestMessage"],
            })
        })
        .collect();
    let mut totals = stats(&one["totals"]);
    totals["partitions"] = one["totals"]["partitions"].clone();
    json!({
        "id": one["id"],
        "name": one["name"],
        "namespace": one["namespace"],
        "task": one["task"],
        "createdAt": one["createdAt"],
        "options": one["options"],
        "partitions": partitions,
        "totals": totals,
        "retainedBytes": one["retainedBytes"],
        "segments": one["segments"],
    })
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
    pass(
        &state,
        "SELECT queen.queue_depth($1, $2)",
        &[&queue, &group],
    )
    .await
}

/// The namespaces queues carry.
pub async fn namespaces(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.resource_namespaces()", &[]).await
}

/// The tasks queues carry.
pub async fn tasks(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.resource_tasks()", &[]).await
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
    pass(
        &state,
        "SELECT queen.partition_backlog($1, $2)",
        &[&queue, &limit],
    )
    .await
}

/// The longest a fetch waits for records, in milliseconds (Queen's bound).
const FETCH_MAX_WAIT_MS: u64 = 30_000;

/// Records of named partitions from given offsets: no lease, no cursor.
/// With `maxWaitMs`, a fetch whose entries all name one queue and that
/// found fewer than `minBytes` (default 1) payload bytes and no entry error
/// waits on that queue like a waiting pop, then reads again; a fetch over
/// several queues answers at once.
pub async fn fetch(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    let wait_ms = body
        .get("maxWaitMs")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(FETCH_MAX_WAIT_MS);
    let min_bytes = body.get("minBytes").and_then(Value::as_i64).unwrap_or(1);
    let key = one_queue(&body).map(Key::Queue);
    let hold = Duration::from_millis(wait_ms).min(
        state
            .config
            .request_timeout
            .saturating_sub(Duration::from_millis(500)),
    );
    let deadline = Instant::now() + hold;
    loop {
        let answer = call(&state, "SELECT queen.fetch($1::jsonb)", &[&body]).await?;
        let (bytes, any_error) = delivered(&answer);
        let now = Instant::now();
        let Some(key) = key.as_ref().filter(|_| now < deadline) else {
            return ok(answer);
        };
        if any_error || bytes >= min_bytes {
            return ok(answer);
        }
        if state
            .waiters
            .wait(&state.pool, key, deadline - now)
            .await
            .is_err()
        {
            // No place to wait: what there is, at once.
            return ok(answer);
        }
    }
}

/// The queue every entry of a fetch names, when they all name the same one.
fn one_queue(body: &Value) -> Option<String> {
    let entries = body.get("entries")?.as_array()?;
    let first = entries.first()?.get("queue")?.as_str()?;
    entries
        .iter()
        .all(|e| e.get("queue").and_then(Value::as_str) == Some(first))
        .then(|| first.to_owned())
}

/// The payload bytes a fetch answer delivered (each record counting at
/// least one), and whether an entry carries an error.
fn delivered(answer: &Value) -> (i64, bool) {
    let entries = answer["entries"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let bytes = entries
        .iter()
        .filter_map(|e| e["records"].as_array())
        .flatten()
        .map(|r| (r["payload"].to_string().len() as i64).max(1))
        .sum();
    (bytes, entries.iter().any(|e| e.get("error").is_some()))
}

/// The partitions written since a time, a page per entry, and `safeTime`.
pub async fn partitions_changed(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    pass(
        &state,
        "SELECT queen.partitions_changed($1::jsonb)",
        &[&body],
    )
    .await
}

/// Every KV namespace holding a live key, with its keys.
pub async fn kv_namespaces(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.kv_namespaces()", &[]).await
}

/// A page of one KV namespace's keys, read-only.
pub async fn kv_list(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    pass(&state, "SELECT queen.kv_list($1::jsonb)", &[&body]).await
}

/// Why a queue's disk does or does not shrink: per partition, what the next
/// retention cycle deletes and what pins the rest; 404 when unknown.
pub async fn retention(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> Answer {
    pass(&state, "SELECT queen.retention_explain($1)", &[&queue]).await
}

/// A queue's counts, with the dead letters DLQ retention removed; 404 when
/// unknown.
pub async fn counts(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> Answer {
    pass(&state, "SELECT queen.queue_counts($1)", &[&queue]).await
}

/// What the timer and KV sweepers did, and how late they fire.
pub async fn sweeper(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.sweeper_metrics()", &[]).await
}

/// KV usage per namespace as of the last rollup, beside its quota.
pub async fn kv_usage(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.kv_usage()", &[]).await
}

/// The maintenance tasks: on or off, running now, last started and
/// finished, last error, next due.
pub async fn maintenance(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.maintenance_status()", &[]).await
}

/// Who may call what: each of queen's group roles with the functions it may
/// call, and the deprecated names.
pub async fn rights(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.rights()", &[]).await
}
