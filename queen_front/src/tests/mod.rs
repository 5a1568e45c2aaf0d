//! In-process tests of the front-end: requests sent to the router as the
//! server builds it, against a database that is unreachable or a stand-in
//! server that answers what the test scripted.

mod auth;
mod bodies;
mod cors;
mod dashboard;
mod errors;
pub mod fakepg;
mod layout;
mod longpolls;
mod queries;
mod queues;
mod startup;
mod timeouts;

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use serde_json::Value;
use tower::ServiceExt;

use crate::config::Config;
use crate::state::{AppState, ThreadState};
use crate::{db, longpoll};

/// A database address where nothing listens: every call is a 503.
pub const UNREACHABLE: &str = "host=127.0.0.1 port=1 user=queen dbname=queen";

/// The configuration of `vars` over test defaults: the unreachable
/// database, a one-connection pool, a two-second request timeout.
pub fn config(vars: &[(&str, &str)]) -> Config {
    let mut map: HashMap<String, String> = [
        ("DATABASE_URL", UNREACHABLE),
        ("QUEEN_POOL_SIZE", "1"),
        ("QUEEN_THREADS", "1"),
        ("QUEEN_REQUEST_TIMEOUT_MS", "2000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    for (k, v) in vars {
        map.insert((*k).to_owned(), (*v).to_owned());
    }
    Config::from_lookup(&|name| map.get(name).cloned()).expect("a valid test configuration")
}

pub fn state(config: Config) -> AppState {
    let config = Arc::new(config);
    let pool = db::pool(&config, config.pool_size).unwrap();
    let fusion = crate::fusion::Fusion::new(&config.fusion, Arc::default());
    if tokio::runtime::Handle::try_current().is_ok() {
        fusion.start(&pool);
    }
    AppState::new(ThreadState {
        pool,
        fusion,
        figures: Arc::default(),
        queue_listing: Arc::default(),
        group_listing: Arc::default(),
        auth: crate::auth::Auth::new(&config.jwt).unwrap(),
        waiters: longpoll::Waiters::new(
            config.long_poll_period,
            config.max_waiters,
            config.request_timeout,
        ),
        config,
    })
}

pub fn app(vars: &[(&str, &str)]) -> Router {
    crate::routes::app(state(config(vars)))
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The body as JSON, or as a JSON string when it is not JSON.
    pub body: Value,
}

pub async fn send(app: &Router, req: Request<Body>) -> Answer {
    let response = app.clone().oneshot(req).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Answer {
        status,
        headers,
        body,
    }
}

/// A request with a JSON body.
pub fn json(method: &str, uri: &str, body: &Value) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// A request without a body.
pub fn bare(method: &str, uri: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .body(Body::empty())
        .unwrap()
}
