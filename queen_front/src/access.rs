//! Which routes need which roles, and the layer that checks a request's
//! token against its route before the handler runs. The levels follow
//! Queen's broker route for route: reads need `read-only`; a push and a
//! timer schedule are producing (`write-only`); pops, acks, transactions,
//! leases, KV and lock writes, configure, seek, subscription, DLQ retry and
//! message deletion change consumer state (`read-write`); deleting a queue
//! or a consumer group needs `admin`. A route missing from the table needs
//! `admin`.

use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::{Auth, Level};
use crate::error::ApiError;

/// The level the route `template` (as the router declares it) needs for
/// `method`.
pub fn level(method: &Method, template: &str) -> Level {
    use Level::*;
    // A HEAD is served by the GET of its route.
    let method = if method == Method::HEAD {
        "GET"
    } else {
        method.as_str()
    };
    match (method, template) {
        ("GET", "/health" | "/metrics/prometheus") => Public,
        (
            "GET",
            "/api/v1/status"
            | "/api/v1/resources/overview"
            | "/api/v1/resources/queues"
            | "/api/v1/resources/queues/{queue}"
            | "/api/v1/dlq"
            | "/api/v1/messages/{partition_id}/{transaction_id}"
            | "/api/v1/kv/{ns}/{*key}"
            | "/api/v1/consumer-groups"
            | "/api/v1/consumer-groups/{group}"
            | "/api/v1/analytics/retention"
            | "/api/v1/analytics/postgres-stats",
        ) => ReadOnly,
        ("POST", "/api/v1/push" | "/api/v1/timers") => WriteOnly,
        (
            "GET",
            "/api/v1/pop"
            | "/api/v1/pop/queue/{queue}"
            | "/api/v1/pop/queue/{queue}/partition/{partition}",
        ) => ReadWrite,
        (
            "POST",
            "/api/v1/configure"
            | "/api/v1/ack"
            | "/api/v1/ack/batch"
            | "/api/v1/transaction"
            | "/api/v1/lease/{lease}/extend"
            | "/api/v1/kv"
            | "/api/v1/locks"
            | "/api/v1/messages/{partition_id}/{transaction_id}/retry"
            | "/api/v1/consumer-groups/{group}/queues/{queue}/seek"
            | "/api/v1/consumer-groups/{group}/subscription",
        ) => ReadWrite,
        ("PUT", "/api/v1/kv/{ns}/{*key}") => ReadWrite,
        (
            "DELETE",
            "/api/v1/kv/{ns}/{*key}"
            | "/api/v1/timers/{queue}/{*timer_key}"
            | "/api/v1/messages/{partition_id}/{transaction_id}",
        ) => ReadWrite,
        (
            "DELETE",
            "/api/v1/resources/queues/{queue}"
            | "/api/v1/consumer-groups/{group}"
            | "/api/v1/consumer-groups/{group}/queues/{queue}",
        ) => Admin,
        _ => Admin,
    }
}

/// Who is calling, as the access layer found it: the token's `sub`; None
/// when authentication is off, on a public route, or for a token without
/// one.
#[derive(Clone, Debug)]
pub struct Caller {
    pub subject: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Caller, ApiError> {
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| {
            tracing::error!(
                "{} {} was served without the access layer",
                parts.method,
                parts.uri.path()
            );
            ApiError::internal()
        })
    }
}

/// The access layer (a route layer: it runs only for requests that matched
/// a route and method, so unknown routes are 404 and wrong methods 405
/// whatever the token).
pub async fn authorize(State(auth): State<Auth>, mut req: Request, next: Next) -> Response {
    let level = match req.extensions().get::<MatchedPath>() {
        Some(route) => level(req.method(), route.as_str()),
        None => Level::Admin,
    };
    let subject = if level == Level::Public {
        None
    } else {
        match auth.verify(req.headers()) {
            Err(e) => return e.into_response(),
            Ok(None) => None,
            Ok(Some(token)) if token.grants.allows(level) => token.subject,
            Ok(Some(_)) => {
                let message = format!(
                    "{} {} needs a token with the role {}",
                    req.method(),
                    req.uri().path(),
                    level.roles()
                );
                return ApiError::new(StatusCode::FORBIDDEN, "forbidden", message).into_response();
            }
        }
    };
    req.extensions_mut().insert(Caller { subject });
    next.run(req).await
}
