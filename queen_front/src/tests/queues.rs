//! The queues' resource and status routes: Queen's bodies made from the
//! answers of `queen.queues_list` and `queen.queue_get`, and what those are
//! asked.

use axum::http::StatusCode;
use serde_json::{json, Value};

use super::fakepg::{FakePg, Reply, TEXT};
use super::{app, bare, send};

/// A partition of `queen.queue_get`'s answer, its counts made from `n`.
fn partition(n: i64) -> Value {
    json!({
        "id": n.to_string(), "name": format!("p{n:04}"), "createdAt": "2026-01-01T00:00:00.000Z",
        "lastOffset": n + 4, "logStart": 0, "lastWriteAt": "2026-01-02T00:00:00.000Z",
        "oldestMessage": "2026-01-01T00:00:01.000Z", "newestMessage": "2026-01-02T00:00:00.000Z",
        "consumed": n, "messages": n + 5, "failed": 1,
        "slowestCursor": {"pending": 3, "processing": 1, "completed": n + 1},
        "allCursors": {"pending": 2, "processing": 2, "completed": n},
    })
}

/// `queen.queue_get`'s answer for a queue of `partitions` partitions.
fn one_queue(partitions: i64) -> Value {
    json!({
        "id": "7", "name": "q", "namespace": "ns", "task": null,
        "createdAt": "2026-01-01T00:00:00.000Z", "pruned_failed": 2,
        "options": {"priority": 3, "leaseTime": 30, "retryLimit": 4, "retryDelay": 500,
                    "maxQueueSize": 0, "deadLetterQueue": true, "ttl": 3600, "namespace": "ns"},
        "partitions": (0..partitions).map(partition).collect::<Vec<_>>(),
        "totals": {"partitions": partitions, "messages": 90, "failed": 4,
                   "slowestCursor": {"pending": 9, "processing": 3, "completed": 77},
                   "allCursors": {"pending": 8, "processing": 6, "completed": 70}},
        "retainedBytes": 1234, "segments": {"segments": 5, "messages": 90},
    })
}

/// `queen.queues_list`'s answer listing two queues.
fn listed() -> Value {
    let row = |id: i64, name: &str| {
        json!({
            "id": id.to_string(), "name": name, "namespace": null, "task": "t",
            "createdAt": "2026-01-01T00:00:00.000Z", "partitions": 2, "messages": 10,
            "failed": 1, "pruned_failed": 0, "retainedBytes": 99,
            "segments": {"segments": 2, "messages": 10},
            "slowestCursor": {"pending": 6, "processing": 2, "completed": 3},
            "allCursors": {"pending": 5, "processing": 4, "completed": id},
        })
    };
    json!({"queues": [row(2, "b"), row(1, "a")], "total": 9,
           "pagination": {"limit": 100, "offset": 0},
           "kvRows": 3, "kvBytes": 300, "timerRows": 1, "timerBytes": 40})
}

/// The `options` text parameter of the last `queen.queues_list` call.
fn options_of(pg: &FakePg) -> Value {
    let params = pg.params_of("queen.queues_list(").unwrap();
    serde_json::from_slice(params[0].as_deref().unwrap()).unwrap()
}

async fn front(pattern: &str, reply: Reply) -> (FakePg, axum::Router) {
    let pg = FakePg::start(vec![(pattern, reply)]).await;
    let app = app(&[("DATABASE_URL", &pg.url())]);
    (pg, app)
}

#[tokio::test]
async fn the_resource_list_is_made_from_queues_list_newest_first() {
    let (pg, app) = front("queen.queues_list(", Reply::json(&[], listed())).await;
    let answer = send(&app, bare("GET", "/api/v1/resources/queues?limit=1")).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(
        pg.executed(r#"queen.queues_list('{"order": "newest"}')"#),
        1
    );
    let q = |id: &str, name: &str| {
        json!({"id": id, "name": name, "namespace": null, "task": "t",
               "createdAt": "2026-01-01T00:00:00.000Z", "partitions": 2, "retainedBytes": 99,
               "messages": {"total": 10, "pending": 6, "processing": 2},
               "segments": {"segments": 2, "messages": 10}})
    };
    assert_eq!(
        answer.body,
        json!({"queues": [q("2", "b"), q("1", "a")], "kvRows": 3, "kvBytes": 300,
               "timerRows": 1, "timerBytes": 40})
    );
}

#[tokio::test]
async fn the_status_list_is_made_from_queues_list_with_queens_page() {
    let (pg, app) = front("queen.queues_list(", Reply::json(&[TEXT], listed())).await;
    let answer = send(
        &app,
        bare("GET", "/api/v1/status/queues?namespace=n&order=name"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(
        options_of(&pg),
        json!({"namespace": "n", "limit": "100", "order": "newest"})
    );
    let q = |id: &str, name: &str, completed: i64| {
        json!({"id": id, "name": name, "namespace": null, "task": "t",
               "createdAt": "2026-01-01T00:00:00.000Z", "partitions": 2,
               "messages": {"total": 10, "pending": 5, "processing": 4,
                            "completed": completed, "deadLetter": 1}})
    };
    assert_eq!(
        answer.body,
        json!({"queues": [q("2", "b", 2), q("1", "a", 1)],
               "pagination": {"limit": 100, "offset": 0}})
    );
    for (uri, limit) in [
        ("/api/v1/status/queues?limit=&offset=3", "100"),
        ("/api/v1/status/queues?limit=7", "7"),
        ("/api/v1/status/queues?limit=x", "x"),
    ] {
        let answer = send(&app, bare("GET", uri)).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}");
        assert_eq!(options_of(&pg)["limit"], limit, "{uri}");
    }
}

#[tokio::test]
async fn the_resource_queue_is_made_from_queue_get() {
    let (pg, app) = front("queen.queue_get(", Reply::json(&[TEXT], one_queue(2))).await;
    let answer = send(&app, bare("GET", "/api/v1/resources/queues/q")).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(pg.executed("queen.queue_get("), 1);
    let p = |n: i64| {
        json!({"id": n.to_string(), "name": format!("p{n:04}"),
               "createdAt": "2026-01-01T00:00:00.000Z",
               "stats": {"total": n + 5, "pending": 3, "processing": 1, "completed": n + 1,
                         "failed": null, "deadLetter": 1},
               "lastOffset": n + 4, "logStart": 0,
               "oldestMessage": "2026-01-01T00:00:01.000Z",
               "newestMessage": "2026-01-02T00:00:00.000Z"})
    };
    assert_eq!(
        answer.body,
        json!({"id": "7", "name": "q", "namespace": "ns", "task": null,
               "createdAt": "2026-01-01T00:00:00.000Z", "options": one_queue(0)["options"],
               "partitions": [p(0), p(1)],
               "totals": {"partitions": 2, "total": 90, "pending": 9, "processing": 3,
                          "completed": 77, "failed": null, "deadLetter": 4},
               "retainedBytes": 1234, "segments": {"segments": 5, "messages": 90}})
    );
}

#[tokio::test]
async fn the_status_queue_is_made_from_queue_get_its_first_thousand_partitions() {
    let (_pg, app) = front("queen.queue_get(", Reply::json(&[TEXT], one_queue(1001))).await;
    let answer = send(&app, bare("GET", "/api/v1/status/queues/q")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let body = answer.body;
    assert_eq!(
        body["queue"],
        json!({"id": "7", "name": "q", "namespace": "ns", "task": null, "priority": 3,
               "createdAt": "2026-01-01T00:00:00.000Z",
               "config": {"leaseTime": 30, "retryLimit": 4, "retryDelay": 500,
                          "maxQueueSize": 0, "deadLetterQueue": true, "ttl": 3600}})
    );
    let partitions = body["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 1000);
    let messages = json!({"total": 6, "pending": 2, "processing": 2, "completed": 1,
                          "deadLetter": 1, "failed": null});
    assert_eq!(
        partitions[1],
        json!({"id": "1", "name": "p0001", "createdAt": "2026-01-01T00:00:00.000Z",
               "messages": messages, "stats": messages,
               "cursor": {"totalConsumed": 1, "batchesConsumed": 0},
               "lastActivity": "2026-01-02T00:00:00.000Z",
               "oldestMessage": "2026-01-01T00:00:01.000Z",
               "newestMessage": "2026-01-02T00:00:00.000Z"})
    );
    // The totals add up the partitions listed: n + 5 and n over 0..1000.
    assert_eq!(
        body["totals"],
        json!({"messages": {"total": 499_500 + 5000, "pending": 2000, "processing": 2000,
                            "completed": 499_500, "deadLetter": 1000, "failed": null}})
    );
}

#[tokio::test]
async fn the_status_queue_of_an_unknown_or_impossible_name_is_a_404() {
    for reply in [
        Reply::error("42704", "queue \"q\" does not exist"),
        Reply::error("22001", "queue: 2000 bytes is longer than the 1024 allowed"),
    ] {
        let (_pg, app) = front("queen.queue_get(", reply).await;
        let answer = send(&app, bare("GET", "/api/v1/status/queues/q")).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        assert_eq!(
            answer.body,
            json!({"success": false, "error": "queue \"q\" does not exist",
                   "code": "not_found", "sqlstate": "42704"})
        );
    }
}
