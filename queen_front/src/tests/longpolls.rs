//! Long polls through the pop route: bounded, and answered at once beyond
//! the bound.

use std::time::{Duration, Instant};

use axum::http::StatusCode;

use super::fakepg::{FakePg, Reply, INT4, JSONB, TEXT};
use super::{bare, config, send, state};

fn empty_pop() -> Reply {
    Reply::text(
        &[TEXT, TEXT, TEXT, INT4, JSONB],
        r#"{"success":true,"messages":[]}"#,
    )
}

#[tokio::test]
async fn a_long_poll_beyond_the_bound_is_a_503_with_retry_after() {
    let pg = FakePg::start(vec![("queen.pop(", empty_pop())]).await;
    let state = state(config(&[
        ("DATABASE_URL", &pg.url()),
        ("QUEEN_MAX_WAITERS", "2"),
    ]));
    let waiters = state.waiters.clone();
    let app = crate::routes::app(state);
    let held: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|q| {
            let app = app.clone();
            let uri = format!("/api/v1/pop/queue/{q}?wait=true&timeout=1500");
            tokio::spawn(async move { send(&app, bare("GET", &uri)).await.status })
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(2);
    while waiters.counts().1 < 2 {
        assert!(Instant::now() < until, "the two polls wait");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let started = Instant::now();
    let answer = send(
        &app,
        bare("GET", "/api/v1/pop/queue/c?wait=true&timeout=1500"),
    )
    .await;
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.body["code"], "too_many_waiters");
    assert_eq!(answer.body["success"], false);
    assert_eq!(answer.headers["retry-after"], "1");
    // A pop that does not wait is served whatever the count.
    let answer = send(&app, bare("GET", "/api/v1/pop/queue/c?wait=false")).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    for h in held {
        assert_eq!(h.await.unwrap(), StatusCode::NO_CONTENT);
    }
    assert_eq!(waiters.counts(), (0, 0, 0));
}

#[tokio::test]
async fn polls_of_many_unknown_queues_leave_no_state_behind() {
    let pg = FakePg::start(vec![("queen.pop(", empty_pop())]).await;
    let state = state(config(&[
        ("DATABASE_URL", &pg.url()),
        ("QUEEN_MAX_WAITERS", "8"),
    ]));
    let waiters = state.waiters.clone();
    let app = crate::routes::app(state);
    let polls: Vec<_> = (0..24)
        .map(|n| {
            let app = app.clone();
            let uri = format!("/api/v1/pop/queue/random-{n}?wait=true&timeout=1000");
            tokio::spawn(async move { send(&app, bare("GET", &uri)).await.status })
        })
        .collect();
    let mut peak = (0, 0, 0);
    while polls.iter().any(|p| !p.is_finished()) {
        let now = waiters.counts();
        peak = (peak.0.max(now.0), peak.1.max(now.1), peak.2.max(now.2));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut refused = 0;
    for p in polls {
        match p.await.unwrap() {
            StatusCode::NO_CONTENT => {}
            StatusCode::SERVICE_UNAVAILABLE => refused += 1,
            other => panic!("{other}"),
        }
    }
    assert!(peak.0 <= 8 && peak.1 <= 8 && peak.2 <= 8, "{peak:?}");
    assert!(refused > 0, "{refused}");
    assert_eq!(waiters.counts(), (0, 0, 0));
}

#[tokio::test]
async fn an_ephemeral_long_poll_beyond_the_bound_is_a_503_too() {
    let empty = Reply::json(
        &[TEXT, TEXT, TEXT, 20, 16],
        serde_json::json!({"queue": "e", "messages": []}),
    );
    let pg = FakePg::start(vec![("queen.ephemeral_pop(", empty)]).await;
    let state = state(config(&[
        ("DATABASE_URL", &pg.url()),
        ("QUEEN_MAX_WAITERS", "1"),
    ]));
    let waiters = state.waiters.clone();
    let app = crate::routes::app(state);
    let held = {
        let app = app.clone();
        tokio::spawn(async move {
            send(
                &app,
                bare(
                    "GET",
                    "/api/v1/ephemeral/pop?queue=a&wait=true&timeout=1500",
                ),
            )
            .await
            .status
        })
    };
    let until = Instant::now() + Duration::from_secs(2);
    while waiters.counts().1 < 1 {
        assert!(Instant::now() < until, "the first poll waits");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let pops_before = pg.executed("queen.ephemeral_pop(");
    let answer = send(
        &app,
        bare(
            "GET",
            "/api/v1/ephemeral/pop?queue=b&wait=true&timeout=1500",
        ),
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.body
    );
    assert_eq!(answer.body["code"], "too_many_waiters");
    // It popped once, found nothing and had no place to wait: no more pops.
    assert_eq!(pg.executed("queen.ephemeral_pop(") - pops_before, 1);
    assert_eq!(held.await.unwrap(), StatusCode::OK);
    assert_eq!(waiters.counts(), (0, 0, 0));
}
