//! Routes. Each is one call to the extension's public SQL API: the JSON body
//! goes through as jsonb, binary bodies as bytea, and the answer comes back
//! as it is. No business logic lives here.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio_postgres::types::ToSql;

use crate::access::Caller;
use crate::body::{JsonBody, WriteBody};
use crate::error::ApiError;
use crate::longpoll::Key;
use crate::state::AppState;

const POP_FRAMES: &str = "application/x-queen-pop";

/// The routes behind every layer the front-end serves them with (all but
/// the request trace).
pub fn app(state: AppState) -> Router {
    let config = std::sync::Arc::clone(&state.config);
    with_layers(router(state), &config)
}

/// The layers around the routes, outermost first: a panic's answer, the body
/// limit, JSON for the HTTP layer's own refusals, the browser guard.
pub fn with_layers(routes: Router, config: &crate::config::Config) -> Router {
    let limit = config.body_limit_bytes;
    routes
        .layer(axum::middleware::from_fn_with_state(
            config.cors_origins.clone(),
            crate::cors::guard,
        ))
        .layer(axum::middleware::from_fn_with_state(
            limit,
            crate::error::json_refusals,
        ))
        .layer(DefaultBodyLimit::max(limit))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            crate::error::panic_answer,
        ))
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/api/v1/configure", post(configure))
        .route("/api/v1/push", post(push))
        .route("/api/v1/pop", get(pop_filtered))
        .route("/api/v1/pop/queue/{queue}", get(pop_queue))
        .route(
            "/api/v1/pop/queue/{queue}/partition/{partition}",
            get(pop_partition),
        )
        .route("/api/v1/ack", post(ack))
        .route("/api/v1/ack/batch", post(ack))
        .route("/api/v1/transaction", post(transaction))
        .route("/api/v1/lease/{lease}/extend", post(extend_lease))
        .route("/api/v1/resources/overview", get(overview))
        .route("/api/v1/status", get(overview))
        .route("/api/v1/resources/queues", get(list_queues))
        .route(
            "/api/v1/resources/queues/{queue}",
            get(get_queue).delete(delete_queue),
        )
        .route("/api/v1/dlq", get(dlq))
        .route(
            "/api/v1/messages/{partition_id}/{transaction_id}",
            get(get_message).delete(delete_message),
        )
        .route(
            "/api/v1/messages/{partition_id}/{transaction_id}/retry",
            post(retry_message),
        )
        .route("/api/v1/timers", post(timers))
        .route("/api/v1/kv", post(kv))
        .route(
            "/api/v1/kv/{ns}/{*key}",
            get(kv_get).put(kv_put).delete(kv_delete),
        )
        .route("/api/v1/locks", post(locks))
        .route(
            "/api/v1/timers/{queue}/{*timer_key}",
            axum::routing::delete(cancel_timer),
        )
        .route("/api/v1/consumer-groups", get(consumer_groups))
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
            "/api/v1/consumer-groups/{group}/subscription",
            post(consumer_group_subscription),
        )
        .route("/api/v1/analytics/retention", get(retention_analytics))
        .route("/api/v1/analytics/postgres-stats", get(postgres_stats))
        .route("/metrics/prometheus", get(prometheus))
        .route_layer(axum::middleware::from_fn_with_state(
            state.auth.clone(),
            crate::access::authorize,
        ))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .with_state(state)
}

type Answer = Result<Response, ApiError>;

async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no route for {method} {}", uri.path()),
    )
}

/// A known path asked with a method it does not serve (the answer keeps
/// its `Allow` header).
async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} does not serve {method}", uri.path()),
    )
}

/// Runs one SQL call answering one value (JSON, or bytes), within the
/// request timeout.
async fn call_as<T>(
    state: &AppState,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<T, ApiError>
where
    T: for<'a> tokio_postgres::types::FromSql<'a>,
{
    crate::db::one_value(&state.pool, state.config.request_timeout, sql, params).await
}

async fn call(
    state: &AppState,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Value, ApiError> {
    call_as::<Value>(state, sql, params).await
}

fn ok(v: Value) -> Answer {
    Ok(Json(v).into_response())
}

/// A JSON answer the extension already wrote, passed on as it is.
fn json_text(text: String) -> Answer {
    Ok(([(header::CONTENT_TYPE, "application/json")], text).into_response())
}

/// A JSON request body passed on as text, for the extension to parse once.
fn text_body(body: &Bytes) -> Result<&str, ApiError> {
    std::str::from_utf8(body).map_err(|_| ApiError::bad_request("malformed JSON body: not UTF-8"))
}

fn json_body(body: &Bytes) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))
}

/// 200 when the database answers and the extension is installed; 503 otherwise.
async fn health(State(state): State<AppState>) -> Response {
    let sql = "SELECT json_build_object('extension', \
               (SELECT extversion FROM pg_extension WHERE extname = 'queen'))";
    let (error, code) =
        match call(&state, sql, &[]).await {
            Ok(v) if v["extension"].is_string() => return Json(
                json!({"status": "healthy", "database": "connected", "extension": v["extension"]}),
            )
            .into_response(),
            Ok(_) => (
                "the queen extension is not installed".to_owned(),
                "unavailable",
            ),
            Err(e) => (e.message, e.code),
        };
    let body =
        json!({"status": "unhealthy", "database": "disconnected", "error": error, "code": code});
    (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
}

async fn configure(State(state): State<AppState>, JsonBody(body): JsonBody) -> Answer {
    let body = json_body(&body)?;
    let queue = body
        .get("queue")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::bad_request("queue: is required"))?
        .to_owned();
    let mut options = body.get("options").cloned().unwrap_or(json!({}));
    if !options.is_object() {
        return Err(ApiError::bad_request("options: must be a JSON object"));
    }
    for key in ["namespace", "task"] {
        if let Some(v) = body.get(key).filter(|v| !v.is_null()) {
            options[key] = v.clone();
        }
    }
    let mode = body
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or("merge")
        .to_owned();
    ok(call(
        &state,
        "SELECT queen.configure($1, $2::jsonb, $3)",
        &[&queue, &options, &mode],
    )
    .await?)
}

async fn push(State(state): State<AppState>, caller: Caller, body: WriteBody) -> Answer {
    let producer = caller.subject;
    let answer = match body {
        WriteBody::Binary(body) => {
            let body = body.to_vec();
            call(
                &state,
                "SELECT queen.push_binary($1, $2)",
                &[&body, &producer],
            )
            .await?
        }
        // Passed through as text: the extension parses it once.
        WriteBody::Json(body) => {
            call(
                &state,
                "SELECT queen.push_text($1, $2)",
                &[&text_body(&body)?, &producer],
            )
            .await?
        }
    };
    // Wake the long polls of what was pushed to (every filter, for binary
    // bodies whose queues are not read here).
    let mut woken: Vec<String> = Vec::new();
    if let Some(a) = answer.as_array() {
        woken.extend(
            a.iter()
                .filter_map(|r| r.get("queue").and_then(Value::as_str).map(str::to_owned)),
        );
    }
    woken.sort();
    woken.dedup();
    if woken.is_empty() {
        state.waiters.wake_queue("");
    }
    for q in &woken {
        state.waiters.wake_queue(q);
    }
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

fn flag(params: &HashMap<String, String>, key: &str) -> Result<bool, ApiError> {
    match params.get(key).map(String::as_str) {
        None | Some("") | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "{key}: {other:?} is not true or false"
        ))),
    }
}

fn number(params: &HashMap<String, String>, key: &str) -> Result<Option<i64>, ApiError> {
    params
        .get(key)
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("{key}: {v:?} is not an integer")))
        })
        .transpose()
}

async fn pop_queue(
    state: State<AppState>,
    Path(queue): Path<String>,
    q: Query<HashMap<String, String>>,
) -> Answer {
    pop(state, Some(queue), None, q).await
}

async fn pop_partition(
    state: State<AppState>,
    Path((queue, partition)): Path<(String, String)>,
    q: Query<HashMap<String, String>>,
) -> Answer {
    pop(state, Some(queue), Some(partition), q).await
}

async fn pop_filtered(state: State<AppState>, q: Query<HashMap<String, String>>) -> Answer {
    pop(state, None, None, q).await
}

/// A pop; with wait=true it holds the request until messages come or the
/// timeout passes (204 when nothing came).
async fn pop(
    State(state): State<AppState>,
    queue: Option<String>,
    partition: Option<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let batch = number(&params, "batch")?.unwrap_or(1);
    let batch = i32::try_from(batch)
        .map_err(|_| ApiError::bad_request(format!("batch: {batch} is out of range")))?;
    let wait = flag(&params, "wait")?;
    let frames = flag(&params, "frames")?;
    let timeout_ms = number(&params, "timeout")?.unwrap_or(30_000).max(0) as u64;
    let group = params
        .get("consumerGroup")
        .filter(|g| !g.is_empty())
        .cloned();
    let mut options = json!({});
    if flag(&params, "autoAck")? {
        options["autoAck"] = json!(true);
    }
    if let Some(p) = number(&params, "partitions")? {
        options["partitions"] = json!(p);
    }
    for key in ["subscriptionMode", "subscriptionFrom", "namespace", "task"] {
        if let Some(v) = params.get(key).filter(|v| !v.is_empty()) {
            options[key] = json!(v);
        }
    }
    let key = match &queue {
        Some(q) => Key::Queue(q.clone()),
        None => Key::Filter {
            namespace: params.get("namespace").cloned(),
            task: params.get("task").cloned(),
        },
    };
    // Never hold a request past the request timeout.
    let hold = Duration::from_millis(timeout_ms).min(
        state
            .config
            .request_timeout
            .saturating_sub(Duration::from_millis(500)),
    );
    let deadline = Instant::now() + hold;
    let mut waited = false;
    loop {
        if frames {
            let bytes: Vec<u8> = call_as(
                &state,
                "SELECT queen.pop_frames($1, $2, $3, $4, $5::jsonb)",
                &[&queue, &partition, &group, &batch, &options],
            )
            .await?;
            let claimed = queen_frames::pop_body::decode_pop_answer(&bytes)
                .map(|a| !a.claims.is_empty())
                .unwrap_or(false);
            if claimed {
                state.waiters.wake(&key);
                return Ok(([(header::CONTENT_TYPE, POP_FRAMES)], bytes).into_response());
            }
        } else {
            // The extension's answer goes out as the text it wrote; only the
            // message count is read here.
            let text: String = call_as(
                &state,
                "SELECT queen.pop($1, $2, $3, $4, $5::jsonb)::text",
                &[&queue, &partition, &group, &batch, &options],
            )
            .await?;
            if popped_any(&text) {
                state.waiters.wake(&key);
                return json_text(text);
            }
        }
        let now = Instant::now();
        if !wait || now >= deadline {
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
        if state
            .waiters
            .wait(&state.pool, &key, deadline - now)
            .await
            .is_err()
        {
            // Refused a place: at once, or (having waited already) as a wait
            // that ended with nothing.
            if waited {
                return Ok(StatusCode::NO_CONTENT.into_response());
            }
            return Err(too_many_waiters(state.config.max_waiters));
        }
        waited = true;
    }
}

/// A long poll refused because the front-end holds as many as it may.
fn too_many_waiters(max: usize) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "too_many_waiters",
        format!(
            "{max} long polls are waiting already (QUEEN_MAX_WAITERS): retry, or pop without wait"
        ),
    )
    .with_header(header::RETRY_AFTER, "1")
}

/// Whether a JSON pop answer holds messages, read without parsing it. The
/// extension writes every field of the answer's head before `messages`, and
/// none of them holds an object, so the first `"messages":[` in the text is
/// the answer's own (a string can not hold an unescaped quote); the byte
/// after it says whether the array is empty. Parsing the whole answer to
/// learn this was a seventh of the front-end's time on a pop of 100.
fn popped_any(text: &str) -> bool {
    const KEY: &str = "\"messages\":[";
    match text.find(KEY) {
        Some(at) => text[at + KEY.len()..]
            .trim_start()
            .as_bytes()
            .first()
            .is_some_and(|b| *b != b']'),
        None => false,
    }
}

/// Acks: the body and the answer pass through as text.
async fn ack(State(state): State<AppState>, JsonBody(body): JsonBody) -> Answer {
    let text = text_body(&body)?;
    let text = if text.trim().is_empty() { "{}" } else { text };
    json_text(call_as(&state, "SELECT queen.ack_text($1)::text", &[&text]).await?)
}

async fn transaction(State(state): State<AppState>, caller: Caller, body: WriteBody) -> Answer {
    let producer = caller.subject;
    let answer = match body {
        WriteBody::Binary(body) => {
            call(
                &state,
                "SELECT queen.transaction_binary($1, $2)",
                &[&body.as_ref(), &producer],
            )
            .await?
        }
        WriteBody::Json(body) => {
            let body = json_body(&body)?;
            call(
                &state,
                "SELECT queen.transaction($1::jsonb, $2)",
                &[&body, &producer],
            )
            .await?
        }
    };
    state.waiters.wake_queue("");
    ok(answer)
}

async fn extend_lease(
    State(state): State<AppState>,
    Path(lease): Path<String>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    let seconds = match body.get("seconds").filter(|v| !v.is_null()) {
        Some(v) => Some(
            v.as_i64()
                .and_then(|s| i32::try_from(s).ok())
                .ok_or_else(|| ApiError::bad_request("seconds: must be an integer"))?,
        ),
        None => None,
    };
    ok(call(
        &state,
        "SELECT queen.renew_lease($1, $2)",
        &[&lease, &seconds],
    )
    .await?)
}

async fn overview(State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.overview()", &[]).await?)
}

async fn list_queues(State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.list_queues()", &[]).await?)
}

async fn get_queue(State(state): State<AppState>, Path(queue): Path<String>) -> Answer {
    ok(call(&state, "SELECT queen.get_queue($1)", &[&queue]).await?)
}

async fn delete_queue(State(state): State<AppState>, Path(queue): Path<String>) -> Answer {
    ok(call(&state, "SELECT queen.delete_queue($1)", &[&queue]).await?)
}

async fn dlq(
    State(state): State<AppState>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let mut options = json!({});
    for key in ["queue", "consumerGroup", "partition", "from", "to"] {
        if let Some(v) = params.get(key).filter(|v| !v.is_empty()) {
            options[key] = json!(v);
        }
    }
    for key in ["limit", "offset"] {
        if let Some(n) = number(&params, key)? {
            options[key] = json!(n);
        }
    }
    ok(call(&state, "SELECT queen.dlq_messages($1::jsonb)", &[&options]).await?)
}

fn partition_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::bad_request(format!("partitionId: {raw:?} is not a partition id")))
}

async fn get_message(
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let pid = partition_id(&pid)?;
    ok(call(
        &state,
        "SELECT queen.get_dlq_message($1, $2)",
        &[&pid, &txn],
    )
    .await?)
}

async fn delete_message(
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let pid = partition_id(&pid)?;
    ok(call(
        &state,
        "SELECT queen.delete_dlq_message($1, $2)",
        &[&pid, &txn],
    )
    .await?)
}

async fn retry_message(
    State(state): State<AppState>,
    Path((pid, txn)): Path<(String, String)>,
) -> Answer {
    let pid = partition_id(&pid)?;
    let answer = call(
        &state,
        "SELECT queen.retry_dlq_message($1, $2)",
        &[&pid, &txn],
    )
    .await?;
    state.waiters.wake_queue("");
    ok(answer)
}

async fn timers(State(state): State<AppState>, JsonBody(body): JsonBody) -> Answer {
    let body = json_body(&body)?;
    ok(call(&state, "SELECT queen.timers($1::jsonb)", &[&body]).await?)
}

/// KV ops in one transaction: `{"operations": [...]}` -> `{"results": [...]}`.
/// A lost precondition is a verdict in the answer (HTTP 200), never an error.
async fn kv(State(state): State<AppState>, JsonBody(body): JsonBody) -> Answer {
    let body = json_body(&body)?;
    ok(call(&state, "SELECT queen.kv($1::jsonb)", &[&body]).await?)
}

async fn kv_one(state: &AppState, op: Value) -> Answer {
    let answer = call(
        state,
        "SELECT queen.kv($1::jsonb)",
        &[&json!({"operations": [op]})],
    )
    .await?;
    ok(answer["results"][0].clone())
}

/// Sugar for curl: one key.
async fn kv_get(State(state): State<AppState>, Path((ns, key)): Path<(String, String)>) -> Answer {
    kv_one(&state, json!({"op": "get", "ns": ns, "key": key})).await
}

/// Sugar for curl: the body is `{"value", "ttlSeconds" | "forever", "expect"?}`.
async fn kv_put(
    State(state): State<AppState>,
    Path((ns, key)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Answer {
    let mut op = json_body(&body)?;
    let Some(fields) = op.as_object_mut() else {
        return Err(ApiError::bad_request(
            "body: must be an object with value and ttlSeconds or forever",
        ));
    };
    fields.insert("op".into(), json!("put"));
    fields.insert("ns".into(), json!(ns));
    fields.insert("key".into(), json!(key));
    kv_one(&state, op).await
}

async fn kv_delete(
    State(state): State<AppState>,
    Path((ns, key)): Path<(String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let mut op = json!({"op": "delete", "ns": ns, "key": key});
    if let Some(e) = params.get("expect") {
        op["expect"] = json!(e
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request("expect: must be a version (an integer)"))?);
    }
    kv_one(&state, op).await
}

/// Locks and semaphores: acquire, renew, release, get. A lock held by
/// another is an answer (HTTP 200), not an error.
async fn locks(State(state): State<AppState>, JsonBody(body): JsonBody) -> Answer {
    let body = json_body(&body)?;
    ok(call(&state, "SELECT queen.locks($1::jsonb)", &[&body]).await?)
}

/// The cancel route: never refused by the scheduling switch.
async fn cancel_timer(
    State(state): State<AppState>,
    Path((queue, timer_key)): Path<(String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let body = json!({"operations": [{"op": "cancel", "queue": queue, "timerKey": timer_key, "txn": params.get("txn")}]});
    let answer = call(&state, "SELECT queen.timers($1::jsonb)", &[&body]).await?;
    ok(answer["results"][0].clone())
}

async fn consumer_groups(State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.consumer_groups_list()", &[]).await?)
}

async fn consumer_group(State(state): State<AppState>, Path(group): Path<String>) -> Answer {
    ok(call(&state, "SELECT queen.consumer_group_get($1)", &[&group]).await?)
}

/// Deletes a group's cursors everywhere or on one queue; `deleteMetadata`
/// (default true) drops its subscription too.
async fn delete_group(
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

async fn delete_consumer_group(
    State(state): State<AppState>,
    Path(group): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    delete_group(&state, &group, None, &params).await
}

async fn delete_consumer_group_on_queue(
    State(state): State<AppState>,
    Path((group, queue)): Path<(String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    delete_group(&state, &group, Some(queue), &params).await
}

async fn seek_consumer_group(
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

async fn consumer_group_subscription(
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

async fn retention_analytics(
    State(state): State<AppState>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let bucket = params
        .get("bucket")
        .cloned()
        .unwrap_or_else(|| "hour".into());
    let hours = number(&params, "hours")?.unwrap_or(24) as f64;
    ok(call(
        &state,
        "SELECT queen.retention_timeseries(now() - make_interval(hours => $1::float8::int), $2)",
        &[&hours, &bucket],
    )
    .await?)
}

async fn postgres_stats(State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.table_sizes()", &[]).await?)
}

/// Per-queue gauges and counters in the Prometheus text format.
async fn prometheus(State(state): State<AppState>) -> Answer {
    let queues = call(&state, "SELECT queen.list_queues()", &[]).await?;
    let text = crate::metrics::prometheus_text(&queues);
    Ok(([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response())
}

#[cfg(test)]
mod tests {
    use super::popped_any;

    #[test]
    fn a_pop_answer_holds_messages_only_when_its_own_array_is_not_empty() {
        let head = |queue: &str| {
            format!(
                r#"{{"success":true,"queue":{},"partition":null,"partitionId":null,"leaseId":null,"consumerGroup":null,"partitionsClaimed":0,"#,
                serde_json::to_string(queue).unwrap()
            )
        };
        assert!(!popped_any(&format!(
            r#"{}"messages":[]}}"#,
            head("orders")
        )));
        assert!(!popped_any(&format!(
            r#"{}"messages":[ ]}}"#,
            head("orders")
        )));
        // A queue named like the key is escaped in the text and not taken for it.
        assert!(!popped_any(&format!(
            r#"{}"messages":[]}}"#,
            head(r#"x","messages":[1"#)
        )));
        let one = r#"{"id":"a","data":{"messages":[]},"offset":0}"#;
        assert!(popped_any(&format!(
            r#"{}"messages":[{one}]}}"#,
            head("orders")
        )));
        assert!(popped_any(&format!(
            r#"{}"messages":[{one},{one}]}}"#,
            head(r#"q"messages":[]"#)
        )));
        assert!(!popped_any(r#"{"success":false}"#));
        assert!(!popped_any(""));
    }
}
