//! Ephemeral queues, as Queen's `/api/v1/ephemeral/*` routes: one call to
//! the extension's `queen.ephemeral_*` functions each. Their contents live
//! in UNLOGGED tables and are lost on a crash; their declarations survive.
//! Every refusal carries Queen's code: `ephemeral_bad_request` (400),
//! `queue_full` (429), `ephemeral_queue_not_found` (404) and
//! `ephemeral_disabled` (503 with Retry-After, while the switch is off). A
//! pop answers 200 with an empty list, never 204; with `wait=true` it
//! holds the request until messages come or its timeout passes.

use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::{call, json_body, ok, Answer};
use crate::access::{Admin, Authorized, ReadOnly, ReadWrite, WriteOnly};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::longpoll::Key;
use crate::query::{flag, number, text, Params};
use crate::state::AppState;

/// The ephemeral queues' routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/ephemeral/configure", post(configure))
        .route("/api/v1/ephemeral/reset", post(reset))
        .route(
            "/api/v1/ephemeral/queue/{queue}",
            axum::routing::delete(delete),
        )
        .route("/api/v1/ephemeral/push", post(push))
        .route("/api/v1/ephemeral/pop", get(pop))
        .route("/api/v1/ephemeral/ack", post(ack))
        .route("/api/v1/ephemeral/queues", get(queues))
        .route("/api/v1/ephemeral/queues/{queue}/depth", get(depth))
}

/// The longest a waiting pop waits before it pops again, even unwoken (a
/// lease ran out). A push through this front-end wakes it at once, and one
/// through another front-end or SQL when the queue's poller next reads the
/// queue's depth (`QUEEN_LONG_POLL_MS`): an idle waiter pops (a write
/// transaction) once per recheck, not once per poll.
const RECHECK: Duration = Duration::from_millis(2_000);

/// A waiting pop's timeout when it gives none, in milliseconds.
const DEFAULT_WAIT_MS: i64 = 30_000;

/// The longest timeout a waiting pop may ask for (Queen's bound), in
/// milliseconds; the request timeout bounds it too.
const MAX_WAIT_MS: i64 = 300_000;

/// A refusal in Queen's ephemeral codes.
fn eph(e: ApiError) -> ApiError {
    let code = match (e.status, e.code) {
        (_, "queue_full" | "ephemeral_disabled") => e.code,
        (StatusCode::BAD_REQUEST, _) => "ephemeral_bad_request",
        (StatusCode::NOT_FOUND, _) => "ephemeral_queue_not_found",
        _ => e.code,
    };
    ApiError { code, ..e }
}

fn bad(message: impl Into<String>) -> ApiError {
    eph(ApiError::bad_request(message))
}

/// The long-poll key of an ephemeral queue.
fn key(queue: &str) -> Key {
    Key::Ephemeral(queue.to_owned())
}

fn created(v: Value) -> Answer {
    Ok((StatusCode::CREATED, Json(v)).into_response())
}

fn body_queue(body: &Value) -> Result<String, ApiError> {
    match body.get("queue") {
        Some(Value::String(q)) => Ok(q.clone()),
        None | Some(Value::Null) => Err(bad("queue: is required")),
        Some(_) => Err(bad("queue: must be a string")),
    }
}

/// `POST /api/v1/ephemeral/configure` `{"queue", "options"?}` → 201.
pub async fn configure(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body).map_err(eph)?;
    let queue = body_queue(&body)?;
    let options = body.get("options").filter(|o| !o.is_null()).cloned();
    let answer = call(
        &state,
        "SELECT queen.ephemeral_configure($1, $2::jsonb)",
        &[&queue, &options],
    )
    .await
    .map_err(eph)?;
    created(answer)
}

/// `POST /api/v1/ephemeral/reset` `{"queue"}` → `{"queue", "dropped"}`.
pub async fn reset(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body).map_err(eph)?;
    let queue = body_queue(&body)?;
    ok(call(&state, "SELECT queen.ephemeral_reset($1)", &[&queue])
        .await
        .map_err(eph)?)
}

/// `DELETE /api/v1/ephemeral/queue/{queue}` → `{"queue", "deleted", "declared"}`.
pub async fn delete(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> Answer {
    ok(call(&state, "SELECT queen.ephemeral_delete($1)", &[&queue])
        .await
        .map_err(eph)?)
}

/// `POST /api/v1/ephemeral/push` `{"queue", "partition"?, "messages"}` → 201
/// `{"pushed"}`.
pub async fn push(
    _: Authorized<WriteOnly>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body).map_err(eph)?;
    let answer = call(&state, "SELECT queen.ephemeral_push($1::jsonb)", &[&body])
        .await
        .map_err(eph)?;
    if let Some(q) = body.get("queue").and_then(Value::as_str) {
        state.waiters.wake(&key(q));
    }
    created(answer)
}

/// The query of the pop.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PopQuery {
    queue: Option<String>,
    partition: Option<String>,
    batch: Option<String>,
    wait: Option<String>,
    timeout: Option<String>,
    group: Option<String>,
    auto_ack: Option<String>,
}

fn messages_of(answer: &mut Value) -> Vec<Value> {
    match answer.get_mut("messages").map(Value::take) {
        Some(Value::Array(m)) => m,
        _ => Vec::new(),
    }
}

/// `GET /api/v1/ephemeral/pop?queue&partition&batch&wait&timeout&group&autoAck`
/// → `{"queue", "messages"}`. With `wait=true` the request is held until
/// messages come or `timeout` (ms) passes; a queue with a windowBuffer
/// `{ms, count}` is held after its first message until `count` messages or
/// `ms` more milliseconds.
pub async fn pop(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Params(q): Params<PopQuery>,
) -> Answer {
    let pop = Pop::read(q)?;
    let hold = Duration::from_millis(pop.timeout_ms as u64).min(
        state
            .config
            .request_timeout
            .saturating_sub(Duration::from_millis(500)),
    );
    let deadline = Instant::now() + hold;
    // A batch below 1 is the extension's to refuse.
    let want = pop.batch.unwrap_or(1);
    let key = key(&pop.queue);
    let mut held = Held::default();
    let mut waited = false;
    loop {
        let rest = want - held.messages.len() as i64;
        let answer = pop.once(&state, rest).await.map_err(eph)?;
        let full = held.take(answer, want);
        let now = Instant::now();
        let window_over = held.window_end.is_some_and(|end| now >= end);
        if full || !pop.wait || now >= deadline || window_over {
            break;
        }
        let until = held.window_end.map_or(deadline, |end| end.min(deadline));
        let nap = (until - now).min(RECHECK);
        if state.waiters.wait(&state.pool, &key, nap).await.is_err() {
            // Refused a place, as the log's long polls are: at once (no pop
            // every nap for a poll the front-end has no room for), or, having
            // got messages or waited already, with what it has.
            if held.messages.is_empty() && !waited {
                return Err(super::messages::too_many_waiters(state.config.max_waiters));
            }
            break;
        }
        waited = true;
    }
    if !held.messages.is_empty() {
        state.waiters.wake(&key);
    }
    ok(json!({"queue": pop.queue, "messages": held.messages}))
}

/// An ephemeral pop as its query asks for it.
struct Pop {
    queue: String,
    partition: Option<String>,
    group: Option<String>,
    batch: Option<i64>,
    wait: bool,
    auto_ack: bool,
    timeout_ms: i64,
}

impl Pop {
    /// Reads the pop's query; a parameter that does not parse is a 400.
    fn read(q: PopQuery) -> Result<Pop, ApiError> {
        let queue = text(&q.queue)
            .ok_or_else(|| bad("queue: is required"))?
            .to_owned();
        let partition = text(&q.partition).map(str::to_owned);
        let group = text(&q.group).map(str::to_owned);
        let batch = number("batch", &q.batch).map_err(eph)?;
        let wait = flag("wait", &q.wait).map_err(eph)?;
        let auto_ack = flag("autoAck", &q.auto_ack).map_err(eph)?;
        let timeout_ms = number("timeout", &q.timeout)
            .map_err(eph)?
            .unwrap_or(DEFAULT_WAIT_MS);
        if !(0..=MAX_WAIT_MS).contains(&timeout_ms) {
            return Err(bad(format!(
                "timeout: {timeout_ms} is not 0 to {MAX_WAIT_MS}"
            )));
        }
        Ok(Pop {
            queue,
            partition,
            group,
            batch,
            wait,
            auto_ack,
            timeout_ms,
        })
    }

    /// Calls the extension's pop once, for at most `rest` messages.
    async fn once(&self, state: &AppState, rest: i64) -> Result<Value, ApiError> {
        call(
            state,
            "SELECT queen.ephemeral_pop($1, $2, $3, $4, $5)",
            &[
                &self.queue,
                &self.partition,
                &self.group,
                &Some(rest),
                &self.auto_ack,
            ],
        )
        .await
    }
}

/// The messages a pop holds so far, and its window's end once the first
/// came.
#[derive(Default)]
struct Held {
    messages: Vec<Value>,
    window_end: Option<Instant>,
}

impl Held {
    /// Takes the messages of one answer, starting the window at the first;
    /// whether the pop has as many as it wants, or as its window counts.
    fn take(&mut self, mut answer: Value, want: i64) -> bool {
        let window = answer.get("windowBuffer").cloned();
        let got = messages_of(&mut answer);
        let first = self.messages.is_empty() && !got.is_empty();
        self.messages.extend(got);
        if first {
            let ms = window.as_ref().and_then(|w| w["ms"].as_u64()).unwrap_or(0);
            self.window_end = Some(Instant::now() + Duration::from_millis(ms));
        }
        let count = window
            .as_ref()
            .and_then(|w| w["count"].as_u64())
            .map_or(0, |c| c as usize);
        self.messages.len() as i64 >= want || (count > 0 && self.messages.len() >= count)
    }
}

/// `POST /api/v1/ephemeral/ack` `{"queue", "group"?, "acks"}` →
/// `{"results": [{"id", "outcome"}]}`.
pub async fn ack(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body).map_err(eph)?;
    let answer = call(&state, "SELECT queen.ephemeral_ack($1::jsonb)", &[&body])
        .await
        .map_err(eph)?;
    let redelivered = answer["results"]
        .as_array()
        .is_some_and(|r| r.iter().any(|a| a["outcome"] == "redelivered"));
    if redelivered {
        if let Some(q) = body.get("queue").and_then(Value::as_str) {
            state.waiters.wake(&key(q));
        }
    }
    ok(answer)
}

/// `GET /api/v1/ephemeral/queues`.
pub async fn queues(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.ephemeral_queues()", &[])
        .await
        .map_err(eph)?)
}

/// The query of the depth read.
#[derive(Deserialize)]
pub struct DepthQuery {
    group: Option<String>,
}

/// `GET /api/v1/ephemeral/queues/{queue}/depth?group=`; 404
/// `ephemeral_queue_not_found` for a queue neither declared nor live.
pub async fn depth(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path(queue): Path<String>,
    Params(q): Params<DepthQuery>,
) -> Answer {
    let group = text(&q.group).map(str::to_owned);
    ok(call(
        &state,
        "SELECT queen.ephemeral_depth($1, $2)",
        &[&queue, &group],
    )
    .await
    .map_err(eph)?)
}
