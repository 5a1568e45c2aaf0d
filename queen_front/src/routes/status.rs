//! Observation: health, the overview, the status and analytics readers,
//! the metrics (Queen's JSON and the Prometheus text). The status and
//! analytics routes pass their query parameters to the extension as one
//! JSON object, which reads and checks them (a bad `from` or `to` is a 400).
//! The status of the queues and of one queue are Queen's shapes made from
//! `queen.queues_list` and `queen.queue_get`.

use axum::extract::Path;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

use super::call::{call, ok, pass, rows, Answer};
use crate::access::{Authorized, Public, ReadOnly};
use crate::error::ApiError;
use crate::query::{number, Params};
use crate::state::AppState;

/// The page of queues the status list answers when `limit` is not given
/// (Queen: 100).
const STATUS_PAGE: &str = "100";
/// The most partitions the status of one queue lists.
const STATUS_PARTITIONS: usize = 1000;
/// The live counts the status adds up over a queue's partitions.
const LIVE_COUNTS: [&str; 5] = ["total", "pending", "processing", "completed", "deadLetter"];

/// The health check, status, analytics and metrics routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/health", get(health))
        .route("/api/v1/status", get(status))
        .route("/api/v1/status/queues", get(status_queues))
        .route("/api/v1/status/queues/{queue}", get(status_queue))
        .route("/api/v1/status/analytics", get(status_analytics))
        .route("/api/v1/stats/refresh", post(stats_refresh))
        .route("/api/v1/analytics/system-metrics", get(system_metrics))
        .route("/api/v1/analytics/worker-metrics", get(worker_metrics))
        .route("/api/v1/analytics/queue-lag", get(queue_lag))
        .route("/api/v1/analytics/queue-ops", get(queue_ops))
        .route("/metrics", get(metrics))
        .route("/api/v1/analytics/retention", get(retention_analytics))
        .route("/api/v1/analytics/postgres-stats", get(postgres_stats))
        .route("/metrics/prometheus", get(prometheus))
        .route("/api/v1/resources/overview", get(overview))
}

/// What `/health` names as the engine answering (Queen's server names its own).
const ENGINE: &str = "queen-postgres";

/// 200 when the database answers and the extension is installed; 503 otherwise.
/// Both carry `engine` and `version` (the front-end's), as Queen's server does.
pub async fn health(_: Authorized<Public>, State(state): State<AppState>) -> Response {
    let version = env!("CARGO_PKG_VERSION");
    // A sharding proxy's database (queen_proxy, docs/scale.md) answers for
    // its shards.
    let sql = "SELECT json_build_object('extension', coalesce(\
               (SELECT extversion FROM pg_extension WHERE extname = 'queen'), \
               (SELECT extversion FROM pg_extension WHERE extname = 'queen_proxy')), \
               'sharded', EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'queen_proxy'))";
    let (error, code) = match call(&state, sql, &[]).await {
        Ok(v) if v["extension"].is_string() => {
            return Json(
                json!({"status": "healthy", "database": "connected", "engine": ENGINE,
                       "version": version, "extension": v["extension"],
                       "sharded": v["sharded"].as_bool().unwrap_or(false)}),
            )
            .into_response()
        }
        Ok(_) => (
            "the queen extension is not installed".to_owned(),
            "unavailable",
        ),
        Err(e) => (e.message, e.code),
    };
    let body = json!({"status": "unhealthy", "database": "disconnected", "engine": ENGINE,
               "version": version, "error": error, "code": code});
    (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
}

/// The overview of every queue, in Queen's shape: `queen.overview()`'s,
/// its counts by state as `messages`, without queen's own totals of kept
/// and dead-lettered messages.
pub async fn overview(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    let mut out = call(&state, "SELECT queen.overview()", &[]).await?;
    if let Some(o) = out.as_object_mut() {
        let counts = o.remove("counts").unwrap_or(Value::Null);
        o.insert("messages".into(), counts);
        o.remove("failed");
        o.remove("pruned_failed");
    }
    ok(out)
}

/// A route's query parameters as one JSON object of texts (a parameter
/// given twice counts once, with its last value).
fn params_json(given: HashMap<String, String>) -> Value {
    Value::Object(
        given
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect::<Map<String, Value>>(),
    )
}

/// The SQL and argument of `function(params jsonb)` with the query's
/// parameters.
fn params_call(function: &str, given: HashMap<String, String>) -> (String, String) {
    let sql = format!("SELECT queen.{function}($1::text::jsonb)");
    (sql, params_json(given).to_string())
}

/// Calls `function(params jsonb)` with the query's parameters and passes
/// its answer on.
async fn with_params(state: &AppState, function: &str, given: HashMap<String, String>) -> Answer {
    let (sql, params) = params_call(function, given);
    pass(state, &sql, &[&params]).await
}

/// Calls `function(params jsonb)` with the query's parameters, for an
/// answer to be reshaped.
async fn call_with_params(
    state: &AppState,
    function: &str,
    given: HashMap<String, String>,
) -> Result<Value, ApiError> {
    let (sql, params) = params_call(function, given);
    call(state, &sql, &[&params]).await
}

/// The status: throughput, live counts, leases, dead letters, workers.
pub async fn status(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<HashMap<String, String>>,
) -> Answer {
    with_params(&state, "status", q).await
}

/// Each queue's live counts, newest first, by `limit` (100 when absent or
/// empty) and `offset`, filtered by `queue`, `namespace` and `task`.
pub async fn status_queues(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(mut q): Params<HashMap<String, String>>,
) -> Answer {
    if q.get("limit").is_none_or(String::is_empty) {
        q.insert("limit".into(), STATUS_PAGE.into());
    }
    q.insert("order".into(), "newest".into());
    ok(status_list(
        &call_with_params(&state, "queues_list", q).await?,
    ))
}

/// Queen's live counts of a queue of `queen.queues_list`, or of a
/// partition of `queen.queue_get`: over every cursor.
fn live_counts(counted: &Value) -> Value {
    let all = &counted["allCursors"];
    json!({
        "total": counted["messages"],
        "pending": all["pending"],
        "processing": all["processing"],
        "completed": all["completed"],
        "deadLetter": counted["failed"],
    })
}

/// Queen's status of the queues from `queen.queues_list`'s answer: per
/// queue `id`, `name`, `namespace`, `task`, `createdAt`, `partitions` and
/// the live `messages`; the `pagination`.
fn status_list(list: &Value) -> Value {
    let queues: Vec<Value> = rows(list, "queues")
        .iter()
        .map(|q| {
            json!({
                "id": q["id"],
                "name": q["name"],
                "namespace": q["namespace"],
                "task": q["task"],
                "createdAt": q["createdAt"],
                "partitions": q["partitions"],
                "messages": live_counts(q),
            })
        })
        .collect();
    json!({"queues": queues, "pagination": list["pagination"]})
}

/// One queue's configuration and partitions; 404 when unknown.
pub async fn status_queue(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> Answer {
    match call(&state, "SELECT queen.queue_get($1)", &[&queue]).await {
        Ok(one) => ok(status_detail(&one)),
        // A name longer than any queue's (22001) names no queue: not found,
        // as Queen's status answers it.
        Err(e) if e.sqlstate.as_deref() == Some("22001") => Err(unknown_queue(&queue)),
        Err(e) => Err(e),
    }
}

/// The refusal of a queue that does not exist, worded as the extension
/// words it (42704).
fn unknown_queue(queue: &str) -> ApiError {
    ApiError {
        sqlstate: Some("42704".into()),
        ..ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("queue {queue:?} does not exist"),
        )
    }
}

/// The `queue` of Queen's status of one queue, from `queen.queue_get`'s
/// answer: with its `priority` and `config` from its options.
fn status_of_queue(one: &Value) -> Value {
    let o = &one["options"];
    json!({
        "id": one["id"],
        "name": one["name"],
        "namespace": one["namespace"],
        "task": one["task"],
        "priority": o["priority"],
        "createdAt": one["createdAt"],
        "config": {
            "leaseTime": o["leaseTime"],
            "retryLimit": o["retryLimit"],
            "retryDelay": o["retryDelay"],
            "maxQueueSize": o["maxQueueSize"],
            "deadLetterQueue": o["deadLetterQueue"],
            "ttl": o["ttl"],
        },
    })
}

/// Queen's status of one queue from `queen.queue_get`'s answer: `queue`,
/// its first [`STATUS_PARTITIONS`] partitions by name with their live
/// counts, and `totals` adding those up.
fn status_detail(one: &Value) -> Value {
    let mut totals = [0i64; LIVE_COUNTS.len()];
    let partitions: Vec<Value> = rows(one, "partitions")
        .iter()
        .take(STATUS_PARTITIONS)
        .map(|p| {
            let mut messages = live_counts(p);
            for (sum, key) in totals.iter_mut().zip(LIVE_COUNTS) {
                *sum += messages[key].as_i64().unwrap_or(0);
            }
            messages["failed"] = Value::Null;
            json!({
                "id": p["id"],
                "name": p["name"],
                "createdAt": p["createdAt"],
                "messages": messages,
                "stats": messages,
                "cursor": {"totalConsumed": p["consumed"], "batchesConsumed": 0},
                "lastActivity": p["lastWriteAt"],
                "oldestMessage": p["oldestMessage"],
                "newestMessage": p["newestMessage"],
            })
        })
        .collect();
    let mut messages: Map<String, Value> = LIVE_COUNTS
        .iter()
        .zip(totals)
        .map(|(k, n)| ((*k).to_owned(), json!(n)))
        .collect();
    messages.insert("failed".into(), Value::Null);
    json!({"queue": status_of_queue(one), "partitions": partitions,
           "totals": {"messages": messages}})
}

/// Messages pushed per minute, hour or day.
pub async fn status_analytics(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<HashMap<String, String>>,
) -> Answer {
    with_params(&state, "status_analytics", q).await
}

/// The database servers' samples.
pub async fn system_metrics(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<HashMap<String, String>>,
) -> Answer {
    with_params(&state, "system_metrics_series", q).await
}

/// The server-wide series.
pub async fn worker_metrics(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<HashMap<String, String>>,
) -> Answer {
    with_params(&state, "worker_metrics_series", q).await
}

/// The lag pops saw, per bucket and queue.
pub async fn queue_lag(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<HashMap<String, String>>,
) -> Answer {
    with_params(&state, "queue_lag", q).await
}

/// The operations per bucket and queue.
pub async fn queue_ops(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<HashMap<String, String>>,
) -> Answer {
    with_params(&state, "queue_ops", q).await
}

/// Counts are live: reports what a refresh covers, refreshing nothing.
pub async fn stats_refresh(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.stats_refresh()", &[]).await
}

/// Queen's JSON metrics: the extension's totals, with this front-end's own
/// connection pool as the database figures.
pub async fn metrics(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    let mut v = call(&state, "SELECT queen.metrics_summary()", &[]).await?;
    let pool = state.pool.status();
    v["database"] = json!({
        "poolSize": pool.max_size,
        "idleConnections": pool.available,
        "waitingRequests": pool.waiting,
    });
    ok(v)
}

/// The query of the retention analytics.
#[derive(Deserialize)]
pub struct RetentionQuery {
    /// The bucket width (`minute`, `hour`, `day`), `hour` when absent or
    /// empty.
    bucket: Option<String>,
    /// How far back, in hours (24 when absent or empty).
    hours: Option<String>,
}

/// The retention time series in Queen's shape (`from`, `to`, `queue`);
/// with `hours` or `bucket`, the older shape: one row per bucket and rule.
/// Both made from `queen.retention_series`.
pub async fn retention_analytics(
    access: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(given): Params<HashMap<String, String>>,
) -> Answer {
    if !given.contains_key("hours") && !given.contains_key("bucket") {
        let mut series = call_with_params(&state, "retention_series", given).await?;
        for point in series["series"].as_array_mut().into_iter().flatten() {
            queen_retention_figures(point);
        }
        queen_retention_figures(&mut series["totals"]);
        return ok(series);
    }
    let q: RetentionQuery = serde_json::from_value(params_json(given))
        .map_err(|e| crate::error::ApiError::bad_request(format!("query: {e}")))?;
    retention_hours(access, state, q).await
}

/// The rules of the retention series, by name, with the prefix of their
/// figures there.
const RETENTION_RULES: [(&str, &str); 3] = [
    ("completed_retention", "completedRetention"),
    ("max_wait_time_eviction", "eviction"),
    ("retention", "retention"),
];

/// Leaves the figures Queen's series has of a point (or the totals): each
/// rule's messages, all messages and the number of deletions.
fn queen_retention_figures(point: &mut Value) {
    if let Some(o) = point.as_object_mut() {
        o.retain(|k, _| k == "bucket" || k.ends_with("Msgs") || k == "eventCount");
    }
}

/// The retention time series over the last `hours` (24 when absent or
/// empty), by `bucket` (`hour` when absent or empty): one row per bucket
/// and rule that deleted, by bucket then rule.
async fn retention_hours(_: Authorized<ReadOnly>, state: AppState, q: RetentionQuery) -> Answer {
    let bucket = q
        .bucket
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "hour".into());
    let hours = number("hours", &q.hours)?.unwrap_or(24) as f64;
    let series = call(
        &state,
        "SELECT queen.retention_series(jsonb_build_object('bucket', $2::text,
                'from', now() - make_interval(hours => $1::float8::int)))",
        &[&hours, &bucket],
    )
    .await?;
    let mut rows = Vec::new();
    for point in series["series"].as_array().into_iter().flatten() {
        for (rule, prefix) in RETENTION_RULES {
            if point[format!("{prefix}Events")].as_i64().unwrap_or(0) > 0 {
                rows.push(json!({
                    "bucket": point["bucket"], "retentionType": rule,
                    "messagesDeleted": point[format!("{prefix}Msgs")],
                    "segmentsDeleted": point[format!("{prefix}Segments")],
                }));
            }
        }
    }
    ok(Value::Array(rows))
}

/// The sizes of queen's tables.
pub async fn postgres_stats(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    pass(&state, "SELECT queen.table_sizes()", &[]).await
}

/// Per-queue gauges and counters in the Prometheus text format.
pub async fn prometheus(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    let age = state.config.metrics_queues_age;
    let queues = state
        .queue_listing
        .get(age, || call(&state, "SELECT queen.queues_list()", &[]))
        .await?;
    let mut text = crate::metrics::prometheus_text(&queues, state.config.metrics_max_queues);
    // Reads every cursor: shared as the queue listing is.
    let groups = state
        .group_listing
        .get(age, || {
            call(&state, "SELECT queen.consumer_groups_list()", &[])
        })
        .await?;
    text.push_str(&crate::metrics::groups_text(
        &Value::Array(super::consumer_groups::queen_summary(&groups)),
        state.config.metrics_max_queues,
    ));
    // Counters in shared memory and one count: read every scrape.
    let sweeper = call(&state, "SELECT queen.sweeper_metrics()", &[]).await?;
    text.push_str(&crate::metrics::timers_text(&sweeper));
    // One row per background task: a handful, read every scrape.
    let tasks = call(&state, "SELECT queen.maintenance_status()", &[]).await?;
    text.push_str(&crate::metrics::tasks_text(&tasks));
    text.push_str(&crate::metrics::fusion_text(&state.fusion.stats));
    Ok(([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response())
}
