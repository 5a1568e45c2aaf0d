//! The message and trace routes of queen_front against a real cluster: what
//! they answer for good input, and the 4xx (with a JSON body) for bad input.

use queen_it::http::{get, request as send};
use queen_it::unique;
use serde_json::{json, Value};

/// Pushes one message with transaction id `txn`; answers its partition id.
fn push_one(queue: &str, txn: &str) -> String {
    let (status, pushed) = send(
        "POST",
        "/api/v1/push",
        Some(&json!({"items": [{"queue": queue, "transactionId": txn, "payload": {"txn": txn}}]})),
    );
    assert_eq!(status, 201, "{pushed}");
    let (_, popped) = get(&format!(
        "/api/v1/pop/queue/{queue}?consumerGroup=peek&batch=1&autoAck=true"
    ));
    popped["messages"][0]["partitionId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn refused(answer: &(u16, Value), status: u16, code: &str) {
    assert_eq!(answer.0, status, "{}", answer.1);
    assert_eq!(answer.1["code"], code, "{}", answer.1);
    assert!(answer.1["error"].is_string(), "{}", answer.1);
}

#[test]
fn a_trace_is_recorded_and_read_back() {
    let q = unique("tr");
    let pid = push_one(&q, "t-1");
    let name = unique("name");
    let (status, rec) = send(
        "POST",
        "/api/v1/traces",
        Some(&json!({"transactionId": "t-1", "partitionId": pid,
                    "traceNames": [name], "data": {"step": 1}})),
    );
    assert_eq!(status, 201, "{rec}");
    assert_eq!(rec["success"], true);
    let (status, mine) = get(&format!("/api/v1/traces/{pid}/t-1"));
    assert_eq!(status, 200);
    assert_eq!(mine["traces"][0]["id"], rec["traceId"]);
    assert_eq!(mine["traces"][0]["consumer_group"], "__QUEUE_MODE__");
    let (status, by) = get(&format!("/api/v1/traces/by-name/{name}?limit=10&offset=0"));
    assert_eq!(status, 200);
    assert_eq!(by["total"], 1);
    assert_eq!(by["traces"][0]["queue_name"], q.as_str());
    let (status, names) = get("/api/v1/traces/names?limit=1000");
    assert_eq!(status, 200);
    assert!(names["trace_names"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["trace_name"] == name.as_str()));
}

#[test]
fn trace_routes_refuse_bad_input() {
    refused(
        &send("POST", "/api/v1/traces", Some(&json!({}))),
        400,
        "invalid_request",
    );
    refused(
        &send(
            "POST",
            "/api/v1/traces",
            Some(&json!({"transactionId": "x", "partitionId": "1"})),
        ),
        400,
        "invalid_request",
    );
    refused(
        &send(
            "POST",
            "/api/v1/traces",
            Some(&json!({"transactionId": "x", "partitionId": "p", "data": {}})),
        ),
        400,
        "invalid_request",
    );
    refused(
        &send(
            "POST",
            "/api/v1/traces",
            Some(&json!({"transactionId": "x", "partitionId": 1, "data": {}, "traceNames": [1]})),
        ),
        400,
        "invalid_request",
    );
    refused(
        &get("/api/v1/traces/by-name/x?limit=abc"),
        400,
        "invalid_request",
    );
    refused(
        &get("/api/v1/traces/by-name/x?limit=0"),
        400,
        "invalid_request",
    );
    refused(
        &get("/api/v1/traces/names?limit=1000000"),
        400,
        "invalid_request",
    );
    refused(
        &get("/api/v1/traces/names?offset=-1"),
        400,
        "invalid_request",
    );
    // No traces is an empty list, even for a partition id that is no number.
    assert_eq!(get("/api/v1/traces/abc/x"), (200, json!({"traces": []})));
    assert_eq!(get("/api/v1/traces/1/none"), (200, json!({"traces": []})));
}

#[test]
fn message_routes_refuse_bad_input() {
    refused(&get("/api/v1/messages?status=done"), 400, "invalid_request");
    refused(&get("/api/v1/messages?limit=0"), 400, "invalid_request");
    refused(&get("/api/v1/messages?limit=x"), 400, "invalid_request");
    refused(
        &get("/api/v1/messages?from=not-a-time"),
        400,
        "invalid_request",
    );
    refused(&get("/api/v1/messages?offset=-5"), 400, "invalid_request");
    for pid in ["abc", "999999999999"] {
        let answer = get(&format!("/api/v1/messages/{pid}/x"));
        refused(&answer, 404, "not_found");
        assert_eq!(answer.1["error"], "Message not found");
        let answer = send("DELETE", &format!("/api/v1/messages/{pid}/x"), None);
        refused(&answer, 404, "not_found");
        assert_eq!(answer.1["success"], false);
        assert_eq!(answer.1["partitionId"], pid);
        assert_eq!(answer.1["transactionId"], "x");
        assert_eq!(answer.1["error"], "Message not found");
    }
    // A queue nobody pushed to lists nothing.
    let (status, empty) = get(&format!("/api/v1/messages?queue={}", unique("none")));
    assert_eq!(status, 200);
    assert_eq!(empty["messages"], json!([]));
    assert_eq!(empty["total"], 0);
}

#[test]
fn a_deleted_live_message_is_never_delivered() {
    let q = unique("del");
    let pid = push_one(&q, "d-1");
    push_one(&q, "d-2");
    let (status, got) = get(&format!("/api/v1/messages/{pid}/d-1"));
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["data"], json!({"txn": "d-1"}));
    assert_eq!(got["queue"], q.as_str());
    let (status, list) = get(&format!("/api/v1/messages?queue={q}"));
    assert_eq!(status, 200);
    assert_eq!(list["total"], 2);
    assert_eq!(list["messages"][0]["transactionId"], "d-2");
    let (status, deleted) = send("DELETE", &format!("/api/v1/messages/{pid}/d-1"), None);
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["success"], true);
    assert_eq!(deleted["message"], "Message deleted successfully");
    refused(
        &send("DELETE", &format!("/api/v1/messages/{pid}/d-1"), None),
        404,
        "not_found",
    );
    refused(
        &get(&format!("/api/v1/messages/{pid}/d-1")),
        404,
        "not_found",
    );
    let (_, popped) = get(&format!(
        "/api/v1/pop/queue/{q}?consumerGroup=fresh&batch=10&wait=false"
    ));
    let txns: Vec<&Value> = popped["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["transactionId"])
        .collect();
    assert_eq!(txns, [&json!("d-2")]);
}

/// Every listing with a time filter reads it as ISO 8601 and refuses
/// PostgreSQL's words (which it would otherwise read as times) and bad text
/// with a 400 naming the field, never PostgreSQL's own message.
#[test]
fn the_listings_refuse_a_from_that_is_not_iso() {
    for (route, field) in [
        ("/api/v1/messages", "filters.from"),
        ("/api/v1/dlq", "options.from"),
        ("/api/v1/status", "from"),
        ("/api/v1/status/analytics", "from"),
        ("/api/v1/analytics/queue-ops", "from"),
        ("/api/v1/analytics/system-metrics", "from"),
    ] {
        for bad in ["yesterday", "2026-01-01T10:00:00Zjunk"] {
            let answer = get(&format!("{route}?from={bad}"));
            refused(&answer, 400, "invalid_request");
            let error = answer.1["error"].as_str().unwrap();
            assert!(
                error.starts_with(&format!("{field}: \"{bad}\" is not an ISO 8601 timestamp")),
                "{route}: {error}"
            );
        }
        let (status, body) = get(&format!(
            "{route}?from=2026-01-01T00:00:00Z&to=2026-01-01T06:00:00%2B01:00"
        ));
        assert_eq!(status, 200, "{route}: {body}");
    }
    // The trace reads take no time filter: one given is not read.
    let (status, body) = get("/api/v1/traces/by-name/none?from=yesterday");
    assert_eq!(status, 200, "{body}");
}

/// A status listing over more stored bytes than its bound answers a page
/// with `hasMore` and a cursor; the cursor reads on to the end.
#[test]
fn a_status_listing_pages_on_by_its_cursor() {
    let q = unique("pages");
    for t in ["a", "b", "c"] {
        push_one(&q, t);
    }
    let mut seen: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/api/v1/messages?queue={q}&status=completed&limit=2");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let (status, page) = get(&path);
        assert_eq!(status, 200, "{page}");
        assert!(page["hasMore"].is_boolean(), "{page}");
        for m in page["messages"].as_array().unwrap() {
            seen.push(m["transactionId"].as_str().unwrap().to_owned());
        }
        cursor = page["cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    // The page bound (2) stops the first page; offsets read on from there.
    assert_eq!(seen, ["c", "b"]);
    let (_, page) = get(&format!(
        "/api/v1/messages?queue={q}&status=completed&limit=2&offset=2"
    ));
    assert_eq!(page["messages"][0]["transactionId"], "a");
    assert_eq!(page["hasMore"], false);
    refused(
        &get(&format!(
            "/api/v1/messages?queue={q}&cursor=1.2.3.0&offset=1"
        )),
        400,
        "invalid_request",
    );
}
