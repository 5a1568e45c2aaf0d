//! Errors as HTTP answers. Every refusal is a JSON body
//! `{"success": false, "error", "code"}`: `code` is the machine-readable
//! verdict, `error` a message for the user. A database error's status and
//! code come from its SQLSTATE, never from its message text. The extension's
//! own message goes out only for a refusal of the request's input (the
//! extension writes those for users, naming the offending field), with its
//! `sqlstate`; anything else answers a generic message and the full text
//! goes to the log.

use std::error::Error as _;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderName, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use tokio_postgres::error::DbError;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    /// The machine-readable verdict a client branches on.
    pub code: &'static str,
    /// What the user is told.
    pub message: String,
    /// The SQLSTATE of a refusal of the request's input, for clients that
    /// branch on it; never set for failures of the server.
    pub sqlstate: Option<String>,
    /// Headers the answer carries (`WWW-Authenticate`, `Retry-After`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

pub const INTERNAL: &str = "internal error";
pub const UNAVAILABLE: &str = "database unavailable";

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            sqlstate: None,
            headers: Vec::new(),
        }
    }
    pub fn with_header(mut self, name: HeaderName, value: &'static str) -> ApiError {
        self.headers.push((name, HeaderValue::from_static(value)));
        self
    }
    /// The answer to a path no route serves (also the dashboard's, when it
    /// is off or asked for an asset it does not have).
    pub fn unknown_route(method: &axum::http::Method, uri: &axum::http::Uri) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "no_such_route",
            format!("no route for {method} {}", uri.path()),
        )
    }
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }
    /// The database could not be reached or broke the connection.
    pub fn unavailable() -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", UNAVAILABLE)
    }
    /// The request ran out of time; its statement was canceled and the
    /// database said so (nothing of it was applied), or it never reached
    /// the database.
    pub fn timeout() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "the database did not answer within the request timeout; the request was not applied",
        )
    }
    /// The statement may have been applied, and the database did not say:
    /// its connection broke while it ran, or it outran the request and did
    /// not answer its cancel in time. A client reads back before it makes
    /// the request again.
    pub fn outcome_unknown() -> ApiError {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "outcome_unknown",
            "the database did not say whether the request was applied; read back before retrying",
        )
    }
    /// A request whose deadline passed while it waited for its call: the
    /// database never saw it.
    pub fn not_applied() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "the request timed out waiting for its call and was not applied",
        )
    }
    pub fn internal() -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", INTERNAL)
    }
    pub fn too_large(limit: usize) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            format!("request body larger than {limit} bytes"),
        )
    }
}

/// The seconds a client is told to wait when a surface is paused.
pub const PAUSED_RETRY_AFTER_S: &str = "5";

/// Queen's code for a paused surface, by the surface's key (the error's
/// detail): `kv_disabled`, `timers_disabled`, `ephemeral_disabled`,
/// otherwise `maintenance`.
fn paused_code(surface: Option<&str>) -> &'static str {
    match surface {
        Some("kv") => "kv_disabled",
        Some("timers_schedule") => "timers_disabled",
        Some("ephemeral") => "ephemeral_disabled",
        _ => "maintenance",
    }
}

/// The status and code of a SQLSTATE that refuses the request's input: the
/// extension's message is passed on.
fn refusal(sqlstate: &str) -> Option<(StatusCode, &'static str)> {
    Some(match sqlstate {
        // Unknown queue, dead letter or group.
        "42704" => (StatusCode::NOT_FOUND, "not_found"),
        // A request over a configured bound (batch, value size).
        "54000" => (StatusCode::PAYLOAD_TOO_LARGE, "request_too_large"),
        // An ephemeral queue at its bounds with policy reject.
        "53000" => (StatusCode::TOO_MANY_REQUESTS, "queue_full"),
        // A namespace's storage quota.
        "53400" => (StatusCode::FORBIDDEN, "storage_quota_exceeded"),
        // A transaction's required lease is not held.
        "55000" => (StatusCode::CONFLICT, "precondition_failed"),
        // A surface an operator paused (the code is refined by the
        // surface, `paused_code`); the answer carries Retry-After.
        "57000" => (StatusCode::SERVICE_UNAVAILABLE, "maintenance"),
        // A concurrent delete, a deadlock: retry.
        "40001" | "40P01" => (StatusCode::CONFLICT, "retry"),
        "23503" | "23505" => (StatusCode::CONFLICT, "conflict"),
        // Bad input: invalid value, wrong type, too long, bad text or binary.
        "42804" => (StatusCode::BAD_REQUEST, "invalid_request"),
        s if s.starts_with("22") => (StatusCode::BAD_REQUEST, "invalid_request"),
        _ => return None,
    })
}

/// The answer for a SQLSTATE that is no fault of the request: a generic
/// message, the status and a code.
fn failure(sqlstate: &str) -> ApiError {
    match sqlstate {
        // The front-end's database role lacks a grant.
        "42501" => ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the front-end's database role may not make this call",
        ),
        // Canceled (a statement timeout of the role or the server).
        "57014" => ApiError::timeout(),
        // A write refused by a read-only session: a hot standby (a
        // failover left the front-end on it), or
        // default_transaction_read_only.
        "25006" => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "read_only",
            "the database takes no writes (a hot standby, or default_transaction_read_only); nothing was applied",
        ),
        // Shutting down, starting up, too many connections, connection
        // trouble.
        "57P01" | "57P02" | "57P03" | "53300" => ApiError::unavailable(),
        // Transaction resolution unknown: the sharding proxy was canceled
        // while a shard ran the call, which commits on its own.
        "08007" => ApiError::outcome_unknown(),
        s if s.starts_with("08") => ApiError::unavailable(),
        // Everything else (XX000, 42P01, 42883, 0A000, ...) is a fault of
        // the server, not of the request.
        _ => ApiError::internal(),
    }
}

impl ApiError {
    /// The answer to an ERROR the extension raised: its SQLSTATE, message
    /// and detail (one request's of a fused call).
    pub fn from_sql(state: &str, message: &str, detail: Option<&str>) -> ApiError {
        let (state, message, detail) = as_shard_raised(state, message, detail);
        sql_answer(state, message, detail, None, None)
    }
}

/// The answer to an ERROR; a fault of the server is logged with what the
/// server said of it.
fn sql_answer(
    state: &str,
    message: &str,
    detail: Option<&str>,
    hint: Option<&str>,
    context: Option<&str>,
) -> ApiError {
    if let Some((status, code)) = refusal(state) {
        let answer = ApiError {
            sqlstate: Some(state.to_owned()),
            ..ApiError::new(status, code, message)
        };
        if state == "57000" {
            return ApiError {
                code: paused_code(detail),
                ..answer
            }
            .with_header(header::RETRY_AFTER, PAUSED_RETRY_AFTER_S);
        }
        return answer;
    }
    let answer = failure(state);
    if answer.status.is_server_error() && answer.code == "internal" {
        tracing::error!(
            sqlstate = state,
            detail,
            hint,
            context,
            "database error: {message}"
        );
    } else {
        tracing::warn!(sqlstate = state, detail, "database refused: {message}");
    }
    answer
}

/// The ERROR as the shard raised it, when the database is a sharding proxy
/// (queen_proxy, docs/scale.md): PL/Proxy passes a shard's SQLSTATE on but
/// prefixes its message (`f(n): [db] REMOTE ERROR: `) and its detail
/// (`Remote detail: `); an ERROR of PL/Proxy's own (XX000 `PL/Proxy
/// function ...`) is a shard it could not reach, the database being away
/// for that call (08006).
fn as_shard_raised<'a>(
    state: &'a str,
    message: &'a str,
    detail: Option<&'a str>,
) -> (&'a str, &'a str, Option<&'a str>) {
    const REMOTE: &str = "REMOTE ERROR: ";
    if let Some(at) = message.find(REMOTE) {
        let detail = detail.map(|d| d.strip_prefix("Remote detail: ").unwrap_or(d));
        return (state, &message[at + REMOTE.len()..], detail);
    }
    if state == "XX000" && message.starts_with("PL/Proxy function") {
        return ("08006", message, detail);
    }
    (state, message, detail)
}

impl From<&DbError> for ApiError {
    fn from(db: &DbError) -> ApiError {
        let (state, message, detail) = as_shard_raised(db.code().code(), db.message(), db.detail());
        sql_answer(state, message, detail, db.hint(), db.where_())
    }
}

/// Whether `e` is the connection breaking (closed, or its socket failing)
/// rather than an answer of the server.
pub fn connection_lost(e: &tokio_postgres::Error) -> bool {
    e.is_closed()
        || e.source()
            .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
}

impl From<tokio_postgres::Error> for ApiError {
    fn from(e: tokio_postgres::Error) -> ApiError {
        if let Some(db) = e.as_db_error() {
            return ApiError::from(db);
        }
        // No error from the server. A broken connection or socket is the
        // database being away; anything else (an answer of an unexpected
        // shape) is a fault here.
        if connection_lost(&e) {
            tracing::warn!("database connection: {e}");
            ApiError::unavailable()
        } else {
            tracing::error!("database client: {e}");
            ApiError::internal()
        }
    }
}

impl From<deadpool_postgres::PoolError> for ApiError {
    fn from(e: deadpool_postgres::PoolError) -> ApiError {
        tracing::warn!("no database connection: {e}");
        ApiError::unavailable()
    }
}

/// The code of an answer made without an `ApiError` (a rejection by the
/// HTTP layer), by its status.
pub fn code_for_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "invalid_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "timeout",
        409 => "conflict",
        413 => "request_too_large",
        415 => "unsupported_media_type",
        429 => "too_many_requests",
        503 => "unavailable",
        s if s >= 500 => "internal",
        _ => "invalid_request",
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({"success": false, "error": self.message, "code": self.code});
        if let Some(state) = &self.sqlstate {
            body["sqlstate"] = json!(state);
        }
        let mut response = (self.status, Json(body)).into_response();
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// The most of a refusal's text the HTTP layer wrote that is read to pass
/// it on (its own messages are a line).
const REFUSAL_TEXT_BYTES: usize = 4096;

/// Answers a refusal made by the HTTP layer itself (an oversize body, a path
/// or query string that does not parse) with JSON like every other, keeping
/// its status and headers.
pub async fn json_refusals(State(limit): State<usize>, req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match axum::body::to_bytes(body, REFUSAL_TEXT_BYTES).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_owned(),
        Err(_) => String::new(),
    };
    let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!("request body larger than {limit} bytes")
    } else if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("refused")
            .to_lowercase()
    } else {
        text
    };
    let body = json!({"success": false, "error": message, "code": code_for_status(status)});
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(body.to_string()))
}

/// The answer for a handler that panicked: the panic goes to the log, the
/// client gets the generic 500.
pub fn panic_answer(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let text = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(not a string)");
    tracing::error!("a handler panicked: {text}");
    ApiError::internal().into_response()
}
