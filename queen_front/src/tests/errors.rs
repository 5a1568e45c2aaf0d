//! Error bodies: a code and a message for the user; SQL text and connection
//! details stay in the log.

use axum::http::StatusCode;
use serde_json::json;

use super::fakepg::{FakePg, Reply};
use super::{app, bare, json, send};

/// A front-end whose configure call answers `reply`.
async fn configure_answering(reply: Reply) -> super::Answer {
    let pg = FakePg::start(vec![("queen.configure(", reply)]).await;
    let app = app(&[("DATABASE_URL", &pg.url())]);
    send(
        &app,
        json("POST", "/api/v1/configure", &json!({"queue": "orders"})),
    )
    .await
}

#[tokio::test]
async fn a_server_fault_answers_a_generic_message_and_no_sql_text() {
    for (sqlstate, text) in [
        (
            "XX000",
            "could not read block 7 in file \"base/16384/2619\"",
        ),
        (
            "XX001",
            "invalid page in block 3 of relation base/16384/16402",
        ),
        ("42P01", "relation \"queen.queues\" does not exist"),
        (
            "42883",
            "function queen.configure(text, jsonb, text) does not exist",
        ),
        ("0A000", "cached plan must not change result type"),
        ("P0001", "SELECT secret FROM queen.kv"),
    ] {
        let answer = configure_answering(Reply::error(sqlstate, text)).await;
        assert_eq!(
            answer.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{sqlstate}"
        );
        assert_eq!(
            answer.body,
            json!({"success": false, "error": "internal error", "code": "internal"}),
            "{sqlstate}"
        );
    }
}

#[tokio::test]
async fn a_refusal_of_the_input_keeps_the_extension_message_and_its_sqlstate() {
    for (sqlstate, text, status, code) in [
        (
            "22023",
            "items[0].queue: is required",
            400,
            "invalid_request",
        ),
        (
            "42804",
            "options.leaseTime: must be a number",
            400,
            "invalid_request",
        ),
        (
            "22P03",
            "decompressed body over the limit",
            400,
            "invalid_request",
        ),
        ("42704", "queue \"ghost\" does not exist", 404, "not_found"),
        (
            "54000",
            "batch: 20000 is over queen.pop_max_batch (10000)",
            413,
            "request_too_large",
        ),
        (
            "53400",
            "namespace \"n\" is over its storage quota",
            403,
            "storage_quota_exceeded",
        ),
        (
            "55000",
            "requiredLeases[0]: the lease is not held",
            409,
            "precondition_failed",
        ),
        (
            "40001",
            "queue \"orders\" was deleted concurrently; retry",
            409,
            "retry",
        ),
        (
            "23505",
            "timerKey \"t\" is already scheduled",
            409,
            "conflict",
        ),
    ] {
        let answer = configure_answering(Reply::error(sqlstate, text)).await;
        assert_eq!(answer.status.as_u16(), status, "{sqlstate}");
        assert_eq!(
            answer.body,
            json!({"success": false, "error": text, "code": code, "sqlstate": sqlstate}),
        );
    }
}

#[tokio::test]
async fn a_shards_refusal_through_the_proxy_is_answered_as_the_shard_raised_it() {
    let answer = configure_answering(Reply::error(
        "22023",
        "queen.configure(3): [queen_s1] REMOTE ERROR: options.leaseTime: must be a positive integer",
    ))
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer.body,
        json!({"success": false, "error": "options.leaseTime: must be a positive integer",
               "code": "invalid_request", "sqlstate": "22023"}),
    );
}

#[tokio::test]
async fn a_shard_the_proxy_can_not_reach_is_a_503() {
    let answer = configure_answering(Reply::error(
        "XX000",
        "PL/Proxy function queen.configure(3): [queen_s2] PQconnectPoll: connection to server failed",
    ))
    .await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.body["code"], "unavailable");
    assert!(!answer.body.to_string().contains("PQconnectPoll"));
}

#[tokio::test]
async fn a_missing_grant_is_a_403_that_names_no_function() {
    let answer = configure_answering(Reply::error(
        "42501",
        "permission denied for function configure",
    ))
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.body["code"], "forbidden");
    assert!(answer.body.get("sqlstate").is_none());
    assert!(!answer.body.to_string().contains("permission denied"));
}

#[tokio::test]
async fn a_canceled_statement_is_a_503_timeout() {
    let answer = configure_answering(Reply::error(
        "57014",
        "canceling statement due to statement timeout",
    ))
    .await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.body["code"], "timeout");
}

#[tokio::test]
async fn a_write_to_a_read_only_database_is_a_503_read_only() {
    // A standby a failover left the front-end on refuses every write.
    let answer = configure_answering(Reply::error(
        "25006",
        "cannot execute INSERT in a read-only transaction",
    ))
    .await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.body["code"], "read_only");
    assert!(answer.body.get("sqlstate").is_none());
}

#[tokio::test]
async fn an_unreachable_database_is_a_503_without_connection_details() {
    let app = app(&[]);
    let answer = send(
        &app,
        json("POST", "/api/v1/configure", &json!({"queue": "q"})),
    )
    .await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        answer.body,
        json!({"success": false, "error": "database unavailable", "code": "unavailable"})
    );
    let health = send(&app, bare("GET", "/health")).await;
    assert_eq!(health.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(health.body["status"], "unhealthy");
    assert_eq!(health.body["code"], "unavailable");
    assert_eq!(health.body["error"], "database unavailable");
}

#[tokio::test]
async fn health_says_whether_the_extension_is_installed() {
    let pg = FakePg::start(vec![(
        "pg_extension",
        Reply::json(&[], json!({"extension": "0.1.0"})),
    )])
    .await;
    let answer = send(&app(&[("DATABASE_URL", &pg.url())]), bare("GET", "/health")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["extension"], "0.1.0");
    assert_eq!(answer.body["sharded"], false);
    let pg = FakePg::start(vec![(
        "pg_extension",
        Reply::json(&[], json!({"extension": "0.3.0", "sharded": true})),
    )])
    .await;
    let answer = send(&app(&[("DATABASE_URL", &pg.url())]), bare("GET", "/health")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["sharded"], true);
    let pg = FakePg::start(vec![(
        "pg_extension",
        Reply::json(&[], json!({"extension": null})),
    )])
    .await;
    let answer = send(&app(&[("DATABASE_URL", &pg.url())]), bare("GET", "/health")).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.body["error"], "the queen extension is not installed");
}

#[tokio::test]
async fn refusals_of_the_http_layer_are_json_too() {
    // A path segment that is not UTF-8 once decoded.
    let answer = send(&app(&[]), bare("GET", "/api/v1/resources/queues/%FF")).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.body["success"], false);
    assert_eq!(answer.body["code"], "invalid_request");
    // A body over the limit: refused before the database is asked.
    let app = app(&[("QUEEN_BODY_LIMIT_BYTES", "64")]);
    let big = json!({"items": [{"queue": "q", "payload": "x".repeat(100)}]});
    let answer = send(&app, json("POST", "/api/v1/push", &big)).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        answer.body,
        json!({"success": false, "error": "request body larger than 64 bytes", "code": "request_too_large"})
    );
}

async fn boom() -> &'static str {
    let secret = "SELECT password FROM users";
    panic!("index out of bounds near {secret}")
}

#[tokio::test]
async fn a_panic_is_a_generic_500_and_its_text_stays_in_the_log() {
    let routes = axum::Router::new().route("/boom", axum::routing::get(boom));
    let app = crate::routes::with_layers(routes, &super::config(&[]));
    let answer = send(&app, bare("GET", "/boom")).await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        answer.body,
        json!({"success": false, "error": "internal error", "code": "internal"})
    );
}
