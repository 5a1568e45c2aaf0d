//! A request that runs out of time cancels its statement and gives up its
//! connection.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::json;

use super::fakepg::{FakePg, Reply, TEXT};
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

/// A front-end over `pg` whose requests have 300 ms, and a push of one
/// message to send it.
fn pushing(pg: &FakePg) -> (axum::Router, serde_json::Value) {
    let state = state(config(&[
        ("DATABASE_URL", &pg.url()),
        ("QUEEN_REQUEST_TIMEOUT_MS", "300"),
    ]));
    let push = json!({"items": [{"queue": "q", "payload": 1}]});
    (crate::routes::app(state), push)
}

#[tokio::test]
async fn a_statement_the_server_cancels_at_the_deadline_is_answered_not_applied() {
    let pg = FakePg::start(vec![(
        "queen.push_text(",
        Reply::slow(Reply::text(&[TEXT, TEXT], "[]"), None, true),
    )])
    .await;
    let (app, push) = pushing(&pg);
    let answer = send(&app, json("POST", "/api/v1/push", &push)).await;
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.body
    );
    assert_eq!(answer.body["code"], "timeout");
    assert!(
        answer.body["error"]
            .as_str()
            .unwrap()
            .contains("not applied"),
        "{}",
        answer.body
    );
    assert_eq!(pg.cancels(), vec![pg.keys()[0]]);
}

#[tokio::test]
async fn a_statement_done_before_its_cancel_is_answered_with_its_result() {
    // It runs past the request's 300 ms and completes before the cancel
    // reaches it: it was applied, and the answer says so, late.
    let pg = FakePg::start(vec![(
        "queen.push_text(",
        Reply::slow(
            Reply::text(&[TEXT, TEXT], r#"[{"status": "queued"}]"#),
            Some(Duration::from_millis(600)),
            false,
        ),
    )])
    .await;
    let (app, push) = pushing(&pg);
    let started = Instant::now();
    let answer = send(&app, json("POST", "/api/v1/push", &push)).await;
    assert!(
        answer.status.is_success(),
        "{} {}",
        answer.status,
        answer.body
    );
    assert_eq!(answer.body[0]["status"], "queued", "{}", answer.body);
    assert!(started.elapsed() >= Duration::from_millis(600));
    assert!(eventually(|| !pg.cancels().is_empty()).await);
}

#[tokio::test]
async fn a_statement_that_answers_neither_is_answered_outcome_unknown() {
    // Its cancel changes nothing and it never ends: the front-end cannot
    // know whether it was applied, and does not say it was not.
    let pg = FakePg::start(vec![(
        "queen.push_text(",
        Reply::slow(Reply::text(&[TEXT, TEXT], "[]"), None, false),
    )])
    .await;
    let (app, push) = pushing(&pg);
    let started = Instant::now();
    let answer = send(&app, json("POST", "/api/v1/push", &push)).await;
    assert_eq!(
        answer.status,
        StatusCode::GATEWAY_TIMEOUT,
        "{}",
        answer.body
    );
    assert_eq!(answer.body["code"], "outcome_unknown");
    let waited = started.elapsed();
    assert!(
        waited >= crate::db::OUTCOME_WAIT && waited < crate::db::OUTCOME_WAIT * 2,
        "{waited:?}"
    );
}
