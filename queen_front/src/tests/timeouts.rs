//! A request that runs out of time cancels its statement and gives up its
//! connection.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::json;

use super::fakepg::{FakePg, Reply};
use super::{bare, config, json, send, state};

/// Waits up to two seconds for `done`.
async fn eventually(done: impl Fn() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(2);
    while !done() {
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

#[tokio::test]
async fn a_timed_out_statement_is_canceled_and_its_connection_never_reused() {
    let pg = FakePg::start(vec![
        ("queen.push_text(", Reply::Hang),
        (
            "pg_extension",
            Reply::json(&[], json!({"extension": "0.1.0"})),
        ),
    ])
    .await;
    let state = state(config(&[
        ("DATABASE_URL", &pg.url()),
        ("QUEEN_REQUEST_TIMEOUT_MS", "300"),
    ]));
    let pool = state.pool.clone();
    let app = crate::routes::app(state);
    let started = Instant::now();
    let push = json!({"items": [{"queue": "q", "payload": 1}]});
    let answer = send(&app, json("POST", "/api/v1/push", &push)).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.body["code"], "timeout");
    assert!(started.elapsed() < Duration::from_secs(2));
    // The server was asked to cancel the statement of the backend running it.
    assert!(eventually(|| !pg.cancels().is_empty()).await);
    assert_eq!(pg.cancels(), vec![pg.keys()[0]]);
    // The connection left the pool and was closed (with the cancel's own).
    assert_eq!(pool.status().size, 0);
    assert!(eventually(|| pg.closed() == 2).await);
    // The next request (the pool holds one connection) gets a new one and is
    // answered, instead of queueing behind the canceled statement.
    let health = send(&app, bare("GET", "/health")).await;
    assert_eq!(health.status, StatusCode::OK, "{}", health.body);
    assert_eq!(pg.keys().len(), 2);
}
