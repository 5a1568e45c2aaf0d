//! Content types, and the answers for unknown routes and methods.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::json;

use super::fakepg::{FakePg, Reply, JSONB, TEXT};
use super::{app, bare, send};

/// Every route that takes a JSON body.
const JSON_ROUTES: &[(&str, &str)] = &[
    ("POST", "/api/v1/configure"),
    ("POST", "/api/v1/push"),
    ("POST", "/api/v1/ack"),
    ("POST", "/api/v1/ack/batch"),
    ("POST", "/api/v1/transaction"),
    (
        "POST",
        "/api/v1/lease/00000000-0000-4000-8000-000000000000/extend",
    ),
    ("POST", "/api/v1/timers"),
    ("POST", "/api/v1/kv"),
    ("PUT", "/api/v1/kv/ns/key"),
    ("POST", "/api/v1/locks"),
    ("POST", "/api/v1/consumer-groups/g/queues/q/seek"),
    ("POST", "/api/v1/consumer-groups/g/subscription"),
];

fn with_type(method: &str, uri: &str, content_type: Option<&str>, body: &str) -> Request<Body> {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(t) = content_type {
        req = req.header("content-type", t);
    }
    req.body(Body::from(body.to_owned())).unwrap()
}

const BODY: &str = r#"{"queue": "q", "subscriptionTimestamp": "2026-01-01T00:00:00Z"}"#;

#[tokio::test]
async fn a_json_route_refuses_any_other_content_type_without_asking_the_database() {
    let pg = FakePg::start(vec![]).await;
    let app = app(&[("DATABASE_URL", &pg.url())]);
    for (method, uri) in JSON_ROUTES {
        for given in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            Some("application/jsonx"),
            None,
        ] {
            let answer = send(&app, with_type(method, uri, given, BODY)).await;
            assert_eq!(
                answer.status,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{method} {uri} {given:?}"
            );
            assert_eq!(answer.body["success"], false);
            assert_eq!(answer.body["code"], "unsupported_media_type");
            assert!(answer.body["error"]
                .as_str()
                .unwrap()
                .contains("application/json"));
        }
    }
    assert!(pg.keys().is_empty(), "no connection was opened");
}

#[tokio::test]
async fn json_with_parameters_and_empty_bodies_reach_the_database() {
    for (method, uri) in JSON_ROUTES {
        for (given, body) in [
            (Some("application/json"), BODY),
            (Some("application/json; charset=utf-8"), BODY),
            (Some("Application/JSON;charset=UTF-8"), BODY),
            // A client's bodiless POST (no body, no content type).
            (None, ""),
        ] {
            let pg = FakePg::start(vec![]).await;
            let app = app(&[("DATABASE_URL", &pg.url())]);
            let answer = send(&app, with_type(method, uri, given, body)).await;
            assert_ne!(
                answer.status,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{method} {uri} {given:?}"
            );
            // Routes that check the body themselves may refuse it first.
            if answer.status != StatusCode::BAD_REQUEST {
                assert_eq!(
                    pg.keys().len(),
                    1,
                    "{method} {uri} {given:?}: {}",
                    answer.body
                );
            }
        }
    }
}

#[tokio::test]
async fn push_and_transaction_take_the_binary_body_as_binary() {
    let pg = FakePg::start(vec![
        (
            "queen.push_binary(",
            Reply::text(&[17, TEXT], r#"{"count": 1}"#),
        ),
        (
            "queen.transaction_binary(",
            Reply::json(&[17, TEXT], json!({"success": true, "binary": true})),
        ),
        (
            "queen.transaction($1::jsonb",
            Reply::json(&[JSONB, TEXT], json!({"success": true, "binary": false})),
        ),
    ])
    .await;
    let app = app(&[("DATABASE_URL", &pg.url())]);
    let binary = Some("application/x-queen-push");
    let answer = send(&app, with_type("POST", "/api/v1/push", binary, "QPB1....")).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
    assert_eq!(answer.body, json!({"count": 1}));
    let answer = send(
        &app,
        with_type("POST", "/api/v1/transaction", binary, "QTB1...."),
    )
    .await;
    assert_eq!(answer.body["binary"], true, "{}", answer.body);
    let answer = send(
        &app,
        with_type(
            "POST",
            "/api/v1/transaction",
            Some("application/json"),
            "{}",
        ),
    )
    .await;
    assert_eq!(answer.body["binary"], false, "{}", answer.body);
    // The binary type is no JSON route's.
    let answer = send(&app, with_type("POST", "/api/v1/ack", binary, "QPB1")).await;
    assert_eq!(answer.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn an_unknown_route_is_a_json_404() {
    let answer = send(&app(&[]), bare("GET", "/api/v1/nothing/here")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(
        answer.body,
        json!({"success": false, "error": "no route for GET /api/v1/nothing/here", "code": "no_such_route"})
    );
    let answer = send(&app(&[]), bare("POST", "/nothing")).await;
    assert_eq!(answer.body["error"], "no route for POST /nothing");
    // The dashboard's page is served to a GET only.
    let answer = send(&app(&[]), bare("POST", "/")).await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.body["code"], "method_not_allowed");
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405_naming_the_allowed_ones() {
    let answer = send(&app(&[]), bare("DELETE", "/api/v1/push")).await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.body["success"], false);
    assert_eq!(answer.body["code"], "method_not_allowed");
    assert_eq!(answer.headers["allow"], "POST");
    let answer = send(&app(&[]), bare("POST", "/api/v1/resources/queues/q")).await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    let allow = answer.headers["allow"].to_str().unwrap();
    assert!(allow.contains("GET") && allow.contains("DELETE"), "{allow}");
}
