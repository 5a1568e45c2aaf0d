//! Messages: push, pop (long polls included), ack, transactions and lease
//! renewal.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_postgres::types::ToSql;

use super::call::{call, call_as, json_body, json_text, ok, text_body, Answer};
use crate::access::{Authorized, ReadWrite, WriteOnly};
use crate::body::{JsonBody, WriteBody};
use crate::error::ApiError;
use crate::fusion::Job;
use crate::longpoll::Key;
use crate::query::{flag, number, text, Params};
use crate::state::AppState;

/// The message path: push, pop, ack, transactions, leases. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
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
}

const POP_FRAMES: &str = "application/x-queen-pop";

/// A push (JSON or the binary body), stamped with the caller's subject as
/// its producer; 201, and the long polls of what was pushed to are woken.
pub async fn push(
    caller: Authorized<WriteOnly>,
    State(state): State<AppState>,
    body: WriteBody,
) -> Answer {
    let producer = caller.subject;
    let (body, binary) = match body {
        WriteBody::Binary(body) => (body, true),
        WriteBody::Json(body) => {
            text_body(&body)?;
            (body, false)
        }
    };
    let job = Job::Push {
        body,
        binary,
        producer,
    };
    // The extension's answer goes out as the text it wrote; only the
    // queues pushed to are read from it.
    let answer = fused_or_alone(&state, job).await?;
    // Wake the long polls of what was pushed to (every filter, for a
    // binary body answered with counts only); one result is one message.
    let mut woken: Vec<Cow<'_, str>> = match serde_json::from_str::<Vec<PushedTo<'_>>>(&answer) {
        Ok(results) => {
            state.figures.pushed(results.len());
            results.into_iter().filter_map(|r| r.queue).collect()
        }
        Err(_) => {
            state.figures.pushed(0);
            Vec::new()
        }
    };
    woken.sort();
    woken.dedup();
    if woken.is_empty() {
        state.waiters.wake_queue("");
    }
    for q in &woken {
        state.waiters.wake_queue(q);
    }
    Ok((
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json")],
        answer,
    )
        .into_response())
}

/// The queue of one push result, borrowed from the answer's text.
#[derive(Deserialize)]
struct PushedTo<'a> {
    #[serde(borrow)]
    queue: Option<Cow<'a, str>>,
}

/// The query of the pop routes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PopQuery {
    batch: Option<String>,
    wait: Option<String>,
    frames: Option<String>,
    timeout: Option<String>,
    consumer_group: Option<String>,
    auto_ack: Option<String>,
    partitions: Option<String>,
    subscription_mode: Option<String>,
    subscription_from: Option<String>,
    namespace: Option<String>,
    task: Option<String>,
    autopilot: Option<String>,
    conflation: Option<String>,
}

/// A pop from one queue.
pub async fn pop_queue(
    _: Authorized<ReadWrite>,
    state: State<AppState>,
    Path(queue): Path<String>,
    q: Params<PopQuery>,
) -> Answer {
    pop(state, Some(queue), None, q).await
}

/// A pop from one partition of a queue.
pub async fn pop_partition(
    _: Authorized<ReadWrite>,
    state: State<AppState>,
    Path((queue, partition)): Path<(String, String)>,
    q: Params<PopQuery>,
) -> Answer {
    pop(state, Some(queue), Some(partition), q).await
}

/// A pop from any queue the namespace and task filters match.
pub async fn pop_filtered(
    _: Authorized<ReadWrite>,
    state: State<AppState>,
    q: Params<PopQuery>,
) -> Answer {
    pop(state, None, None, q).await
}

/// A pop; with wait=true it holds the request until messages come or the
/// timeout passes (204 when nothing came).
async fn pop(
    State(state): State<AppState>,
    queue: Option<String>,
    partition: Option<String>,
    Params(q): Params<PopQuery>,
) -> Answer {
    let pop = Pop::read(queue, partition, q)?;
    // Never hold a request past the request timeout.
    let hold = Duration::from_millis(pop.timeout_ms).min(
        state
            .config
            .request_timeout
            .saturating_sub(Duration::from_millis(500)),
    );
    let deadline = Instant::now() + hold;
    let mut waited = false;
    // The last empty JSON answer.
    let mut empty: Option<String> = None;
    loop {
        match pop.once(&state).await? {
            Found::Messages(answer) => return Ok(answer),
            Found::Nothing(Some(text)) => empty = Some(text),
            Found::Nothing(None) => {}
        }
        let now = Instant::now();
        if !pop.wait || now >= deadline {
            state.figures.popped(0);
            return Ok(nothing_popped(pop.conflation, empty));
        }
        if state
            .waiters
            .wait(&state.pool, &pop.key, deadline - now)
            .await
            .is_err()
        {
            // Refused a place: at once, or (having waited already) as a wait
            // that ended with nothing.
            if waited {
                state.figures.popped(0);
                return Ok(nothing_popped(pop.conflation, empty));
            }
            return Err(too_many_waiters(state.config.max_waiters));
        }
        waited = true;
    }
}

/// A pop as its query asks for it.
struct Pop {
    queue: Option<String>,
    partition: Option<String>,
    group: Option<String>,
    batch: Option<i32>,
    /// The options object the extension's pop takes.
    options: Value,
    wait: bool,
    frames: bool,
    conflation: bool,
    timeout_ms: u64,
    /// The long-poll key the pop waits on and wakes.
    key: Key,
}

/// What one call of a pop found.
enum Found {
    /// Messages: the answer to send.
    Messages(axum::response::Response),
    /// Nothing: the extension's empty answer, for a JSON pop.
    Nothing(Option<String>),
}

impl Pop {
    /// Reads a pop's query; a parameter that does not parse is a 400.
    fn read(
        queue: Option<String>,
        partition: Option<String>,
        q: PopQuery,
    ) -> Result<Pop, ApiError> {
        // An absent batch is the extension's to choose: 1, or an autopilot
        // pop's batch.
        let batch = number("batch", &q.batch)?
            .map(|b| {
                i32::try_from(b)
                    .map_err(|_| ApiError::bad_request(format!("batch: {b} is out of range")))
            })
            .transpose()?;
        let wait = flag("wait", &q.wait)?;
        let frames = flag("frames", &q.frames)?;
        let timeout_ms = number("timeout", &q.timeout)?.unwrap_or(30_000).max(0) as u64;
        let group = text(&q.consumer_group).map(str::to_owned);
        let (options, conflation) = pop_options(&q)?;
        let key = match &queue {
            Some(name) => Key::Queue(name.clone()),
            // The filter's key takes the parameters as given, empty ones too.
            None => Key::Filter {
                namespace: q.namespace,
                task: q.task,
            },
        };
        Ok(Pop {
            queue,
            partition,
            group,
            batch,
            options,
            wait,
            frames,
            conflation,
            timeout_ms,
            key,
        })
    }

    /// Calls the extension's pop once; when it claimed messages, counts
    /// them and wakes the key's other long polls.
    async fn once(&self, state: &AppState) -> Result<Found, ApiError> {
        let args: [&(dyn ToSql + Sync); 5] = [
            &self.queue,
            &self.partition,
            &self.group,
            &self.batch,
            &self.options,
        ];
        if self.frames {
            let bytes: Vec<u8> = call_as(
                state,
                "SELECT queen.pop_frames($1, $2, $3, $4, $5::jsonb)",
                &args,
            )
            .await?;
            let claimed = queen_frames::pop_body::decode_pop_answer(&bytes)
                .ok()
                .map(|a| a.claims.iter().map(|c| c.records.len()).sum::<usize>())
                .filter(|n| *n > 0);
            let Some(n) = claimed else {
                return Ok(Found::Nothing(None));
            };
            state.figures.popped(n);
            state.waiters.wake(&self.key);
            return Ok(Found::Messages(
                ([(header::CONTENT_TYPE, POP_FRAMES)], bytes).into_response(),
            ));
        }
        // The extension's answer goes out as the text it wrote; only the
        // message count is read here.
        let text: String = call_as(
            state,
            "SELECT queen.pop($1, $2, $3, $4, $5::jsonb)::text",
            &args,
        )
        .await?;
        if !popped_any(&text) {
            return Ok(Found::Nothing(Some(text)));
        }
        state.figures.popped(crate::report::pop_messages(&text));
        state.waiters.wake(&self.key);
        json_text(text).map(Found::Messages)
    }
}

/// The options object of a pop's query, and whether it asks for
/// conflation.
fn pop_options(q: &PopQuery) -> Result<(Value, bool), ApiError> {
    let mut options = json!({});
    if flag("autoAck", &q.auto_ack)? {
        options["autoAck"] = json!(true);
    }
    if flag("autopilot", &q.autopilot)? {
        options["autopilot"] = json!(true);
    }
    // A pop that asks for conflation is answered with a body even when it
    // finds nothing: the body says whether conflation applied.
    let conflation = flag("conflation", &q.conflation)?;
    if conflation {
        options["conflation"] = json!(true);
    }
    if let Some(p) = number("partitions", &q.partitions)? {
        options["partitions"] = json!(p);
    }
    for (key, value) in [
        ("subscriptionMode", &q.subscription_mode),
        ("subscriptionFrom", &q.subscription_from),
        ("namespace", &q.namespace),
        ("task", &q.task),
    ] {
        if let Some(v) = text(value) {
            options[key] = json!(v);
        }
    }
    Ok((options, conflation))
}

/// The answer to a pop that found nothing: 204, or, for a pop that asked
/// for conflation, the extension's empty answer (which says whether
/// conflation applied) as a 200.
fn nothing_popped(conflation: bool, empty: Option<String>) -> axum::response::Response {
    match empty {
        Some(text) if conflation => {
            ([(header::CONTENT_TYPE, "application/json")], text).into_response()
        }
        _ => StatusCode::NO_CONTENT.into_response(),
    }
}

/// A long poll refused because the front-end holds as many as it may.
pub(super) fn too_many_waiters(max: usize) -> ApiError {
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
pub async fn ack(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let text = text_body(&body)?;
    let text = if text.trim().is_empty() { "{}" } else { text };
    let job = Job::Ack {
        body: text.to_owned(),
    };
    let answer = fused_or_alone(&state, job).await?;
    state.figures.acked(&answer);
    json_text(answer)
}

/// The answer to `job`: its own call when its fusion lane is idle (or
/// fusion is off), else through the lane.
async fn fused_or_alone(state: &AppState, job: Job) -> Result<String, ApiError> {
    match state.fusion.submit(&state.config, &state.pool, job).await {
        Ok(answer) => answer,
        Err(job) => job.alone(&state.pool, state.config.request_timeout).await,
    }
}

/// A transaction (JSON or the binary body), stamped with the caller's
/// subject as the producer of what it pushes; wakes the long polls.
pub async fn transaction(
    caller: Authorized<ReadWrite>,
    State(state): State<AppState>,
    body: WriteBody,
) -> Answer {
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
    state.figures.add(crate::report::Figure::Transactions, 1);
    state.waiters.wake_queue("");
    ok(answer)
}

/// Renews a lease, by `seconds` when given.
pub async fn extend_lease(
    _: Authorized<ReadWrite>,
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
    let job = Job::Renew { lease, seconds };
    let answer: Value = serde_json::from_str(&fused_or_alone(&state, job).await?).map_err(|e| {
        tracing::error!("a renewal answer does not parse: {e}");
        ApiError::internal()
    })?;
    ok(answer)
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
