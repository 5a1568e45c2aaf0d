//! Which roles each route needs, and the check of a request's token against
//! it. A handler states its need in its signature: its first argument is an
//! [`Authorized<L>`], `L` one of the levels below, so the token is checked
//! before the handler's path, query or body is read (a request without a
//! good token is a 401, one whose roles fall short a 403, whatever else is
//! wrong with it). The levels follow Queen's broker route for route: reads
//! need `read-only`; a push and a timer schedule are producing
//! (`write-only`); pops, acks, transactions, leases, KV and lock writes,
//! configure, seek, subscription, DLQ retry and message deletion change
//! consumer state (`read-write`); deleting a queue or a consumer group
//! needs `admin`. `/health` and the dashboard's page and assets (`/`,
//! `/dashboard/{file}`) are public; the figures (`/metrics`,
//! `/metrics/prometheus`), which the broker leaves public, need `read-only`:
//! they name every queue.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode};

use crate::auth::{Auth, Level};
use crate::error::ApiError;
use crate::state::AppState;

/// A level a handler can need, as a type for [`Authorized`].
pub trait Need: Send + Sync + 'static {
    /// The level the type stands for.
    const LEVEL: Level;
}

/// No token needed.
pub struct Public;
/// Reads.
pub struct ReadOnly;
/// Producing.
pub struct WriteOnly;
/// Consuming and changing state.
pub struct ReadWrite;
/// Deleting and administration.
pub struct Admin;

impl Need for Public {
    const LEVEL: Level = Level::Public;
}
impl Need for ReadOnly {
    const LEVEL: Level = Level::ReadOnly;
}
impl Need for WriteOnly {
    const LEVEL: Level = Level::WriteOnly;
}
impl Need for ReadWrite {
    const LEVEL: Level = Level::ReadWrite;
}
impl Need for Admin {
    const LEVEL: Level = Level::Admin;
}

/// A caller whose token meets the level `L`: with authentication off, or on
/// a public route, anyone.
pub struct Authorized<L> {
    /// The token's `sub`; None when authentication is off, on a public
    /// route, or for a token without one.
    pub subject: Option<String>,
    need: PhantomData<L>,
}

impl<L: Need> FromRequestParts<AppState> for Authorized<L> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let subject = check(
            &state.auth,
            L::LEVEL,
            &parts.method,
            parts.uri.path(),
            &parts.headers,
        )?;
        Ok(Authorized {
            subject,
            need: PhantomData,
        })
    }
}

/// The subject of a request that may go on to a route needing `level`; a
/// 401 for a missing or failed token, a 403 for roles that fall short.
fn check(
    auth: &Auth,
    level: Level,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<Option<String>, ApiError> {
    if level == Level::Public {
        return Ok(None);
    }
    match auth.verify(headers)? {
        None => Ok(None),
        Some(token) if token.grants.allows(level) => Ok(token.subject),
        Some(_) => {
            let message = format!(
                "{method} {path} needs a token with the role {}",
                level.roles()
            );
            Err(ApiError::new(StatusCode::FORBIDDEN, "forbidden", message))
        }
    }
}

/// The level the route `template` (as the router declares it) needs for
/// `method`, written out route by route as Queen's broker gives it (with
/// the routes of its kind this front-end adds); `None` for a route it does
/// not list. The handlers state their levels in their signatures; the tests
/// hold every route listed here to this table, and every route to what its
/// handler states.
#[cfg(test)]
pub fn level(method: &Method, template: &str) -> Option<Level> {
    use Level::*;
    // A HEAD is served by the GET of its route.
    let method = if method == Method::HEAD {
        "GET"
    } else {
        method.as_str()
    };
    Some(match (method, template) {
        ("GET", "/" | "/dashboard/{file}" | "/health") => Public,
        ("POST", "/api/v1/stats/refresh") => ReadOnly,
        (
            "GET",
            "/metrics"
            | "/metrics/prometheus"
            | "/api/v1/status"
            | "/api/v1/status/queues"
            | "/api/v1/status/queues/{queue}"
            | "/api/v1/status/analytics"
            | "/api/v1/analytics/system-metrics"
            | "/api/v1/analytics/worker-metrics"
            | "/api/v1/analytics/queue-lag"
            | "/api/v1/analytics/queue-ops"
            | "/api/v1/resources/overview"
            | "/api/v1/resources/queues"
            | "/api/v1/resources/queues/{queue}"
            | "/api/v1/resources/queues/{queue}/depth"
            | "/api/v1/resources/queues/{queue}/retention"
            | "/api/v1/resources/queues/{queue}/counts"
            | "/api/v1/resources/sweeper"
            | "/api/v1/resources/maintenance"
            | "/api/v1/resources/kv/usage"
            | "/api/v1/resources/namespaces"
            | "/api/v1/resources/tasks"
            | "/api/v1/resources/partitions"
            | "/api/v1/resources/kv/namespaces"
            | "/api/v1/timers/{queue}"
            | "/api/v1/timers/{queue}/{*timer_key}"
            | "/api/v1/dlq"
            | "/api/v1/messages/{partition_id}/{transaction_id}"
            | "/api/v1/messages"
            | "/api/v1/traces/names"
            | "/api/v1/traces/by-name/{name}"
            | "/api/v1/traces/{partition_id}/{transaction_id}"
            | "/api/v1/kv/{ns}/{*key}"
            | "/api/v1/consumer-groups"
            | "/api/v1/consumer-groups/{group}"
            | "/api/v1/consumer-groups/lagging"
            | "/api/v1/analytics/retention"
            | "/api/v1/analytics/postgres-stats"
            | "/api/v1/ephemeral/queues"
            | "/api/v1/ephemeral/queues/{queue}/depth"
            | "/api/v1/resources/streams",
        ) => ReadOnly,
        (
            "POST",
            "/api/v1/fetch"
            | "/api/v1/partitions/changed"
            | "/api/v1/resources/kv/list"
            | "/streams/v1/state/get",
        ) => ReadOnly,
        ("POST", "/api/v1/push" | "/api/v1/timers" | "/api/v1/ephemeral/push") => WriteOnly,
        (
            "GET",
            "/api/v1/pop"
            | "/api/v1/pop/queue/{queue}"
            | "/api/v1/pop/queue/{queue}/partition/{partition}"
            | "/api/v1/ephemeral/pop",
        ) => ReadWrite,
        (
            "POST",
            "/api/v1/configure"
            | "/api/v1/ack"
            | "/api/v1/ack/batch"
            | "/api/v1/transaction"
            | "/api/v1/lease/{lease}/extend"
            | "/api/v1/traces"
            | "/api/v1/kv"
            | "/api/v1/locks"
            | "/api/v1/messages/{partition_id}/{transaction_id}/retry"
            | "/api/v1/consumer-groups/{group}/queues/{queue}/seek"
            | "/api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek"
            | "/api/v1/consumer-groups/{group}/subscription"
            | "/api/v1/dlq/{id}/replay"
            | "/api/v1/ephemeral/ack"
            | "/streams/v1/queries"
            | "/streams/v1/cycle",
        ) => ReadWrite,
        ("POST", "/api/v1/consumer-groups/positions") => ReadOnly,
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
            | "/api/v1/consumer-groups/{group}/queues/{queue}"
            | "/api/v1/dlq"
            | "/api/v1/resources/streams/{name}",
        ) => Admin,
        _ => return None,
    })
}
