//! Consumer groups and dead letters through real connections: two moves of
//! one dead letter racing (one moves it, the other finds it gone), and the
//! HTTP routes' answers to bad and unknown inputs.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use queen_it::http::request as send;
use queen_it::*;
use serde_json::{json, Value};

/// Pushes one message and dead-letters it in queue mode; its row id.
fn dead_letter(c: &mut postgres::Client, queue: &str) -> i64 {
    push(
        c,
        &json!([{"queue": queue, "payload": {"n": 1}, "transactionId": "t-1"}]),
    );
    let popped = pop(c, queue, None, 1, &json!({}));
    ack(c, &acks_for(&popped, "dlq", None));
    let page: Value = c
        .query_one(
            "SELECT queen.dlq_list(jsonb_build_object('queue', $1::text))",
            &[&queue],
        )
        .unwrap()
        .get(0);
    page["messages"][0]["id"].as_str().unwrap().parse().unwrap()
}

#[test]
fn two_replays_of_one_dead_letter_race_and_one_moves_it() {
    let queue = unique("race");
    let mut c = connect();
    let id = dead_letter(&mut c, &queue);
    let mut first = c.transaction().unwrap();
    let moved: Value = first
        .query_one("SELECT queen.dlq_replay($1)", &[&id])
        .unwrap()
        .get(0);
    assert_eq!(moved["result"], "moved");
    let (tx, rx) = mpsc::channel();
    let second = thread::spawn(move || {
        let mut c = connect();
        let r = c.query_one("SELECT queen.dlq_replay($1)", &[&id]);
        tx.send(()).unwrap();
        r.map(|row| row.get::<_, Value>(0))
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "the second replay waits for the row the first holds"
    );
    first.commit().unwrap();
    let err = second.join().unwrap().expect_err("the row is gone");
    assert_eq!(sqlstate(&err), "42704", "{err}");
    let popped = pop(&mut c, &queue, None, 10, &json!({}));
    assert_eq!(messages(&popped).len(), 1, "delivered once: {popped}");
}

#[test]
fn a_replay_that_rolls_back_leaves_the_dead_letter() {
    let queue = unique("rollback");
    let mut c = connect();
    let id = dead_letter(&mut c, &queue);
    let mut t = c.transaction().unwrap();
    t.query_one("SELECT queen.dlq_replay($1)", &[&id]).unwrap();
    t.rollback().unwrap();
    let (status, page) = send("GET", &format!("/api/v1/dlq?queue={queue}"), None);
    assert_eq!(status, 200);
    assert_eq!(page["total"], 1, "{page}");
    let (status, moved) = send("POST", &format!("/api/v1/dlq/{id}/replay"), None);
    assert_eq!(status, 200, "{moved}");
    let (status, gone) = send("POST", &format!("/api/v1/dlq/{id}/replay"), None);
    assert_eq!(status, 404);
    assert_eq!(gone["result"], "gone");
    assert_eq!(gone["success"], false);
}

#[test]
fn dead_letter_routes_refuse_bad_inputs() {
    let (status, gone) = send("POST", "/api/v1/dlq/not-a-number/replay", None);
    assert_eq!(status, 404, "{gone}");
    assert_eq!(gone["dlqId"], "not-a-number");
    let (status, gone) = send("POST", "/api/v1/messages/x/t-1/retry", None);
    assert_eq!(status, 404, "{gone}");
    assert_eq!(gone["transactionId"], "t-1");
    let (status, gone) = send("POST", "/api/v1/messages/999999999/nope/retry", None);
    assert_eq!(status, 404, "{gone}");
    let (status, body) = send("DELETE", "/api/v1/dlq", None);
    assert_eq!(status, 400, "{body}");
    let (status, body) = send("DELETE", "/api/v1/dlq?queue=no-such-queue", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["deleted"], 0);
    let (status, body) = send("GET", "/api/v1/dlq?queue=no-such-queue", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["messages"], json!([]));
    let (status, body) = send("GET", "/api/v1/dlq?limit=0", None);
    assert_eq!(status, 400, "{body}");
    let (status, body) = send("POST", "/api/v1/dlq/1/replay", Some(&json!({"queue": ""})));
    assert_eq!(status, 400, "a blank override: {body}");
}

#[test]
fn consumer_group_routes_refuse_bad_inputs() {
    let queue = unique("cgbad");
    let mut c = connect();
    push(&mut c, &json!([{"queue": queue, "payload": 1}]));
    let seek = format!("/api/v1/consumer-groups/g/queues/{queue}/seek");
    for body in [
        json!({}),
        json!({"position": "sideways"}),
        json!({"timestamp": "not-a-time"}),
        json!({"toEnd": "yes"}),
    ] {
        let (status, answer) = send("POST", &seek, Some(&body));
        assert_eq!(status, 400, "{body}: {answer}");
    }
    let (status, _) = send(
        "POST",
        &format!("/api/v1/consumer-groups/g/queues/{queue}/partitions/nope/seek"),
        None,
    );
    assert_eq!(status, 404);
    // A queue that does not exist, or has no partition yet: Queen's 404,
    // with the SQLSTATE of an unknown object.
    let empty = unique("cgempty");
    c.execute("SELECT queen.configure($1)", &[&empty]).unwrap();
    for q in [empty, unique("cgnone")] {
        let (status, answer) = send(
            "POST",
            &format!("/api/v1/consumer-groups/g/queues/{q}/seek"),
            Some(&json!({"toEnd": true})),
        );
        assert_eq!(status, 404, "{q}: {answer}");
        assert_eq!(answer["code"], "not_found", "{answer}");
        assert_eq!(answer["sqlstate"], "42704", "{answer}");
        assert_eq!(
            answer["error"],
            format!("queue {q:?}: Queue not found or has no partitions")
        );
    }
    let (status, _) = send(
        "DELETE",
        &format!("/api/v1/consumer-groups/g/queues/{queue}?deleteMetadata=maybe"),
        None,
    );
    assert_eq!(status, 400);
    for q in ["abc", "-1"] {
        let (status, _) = send(
            "GET",
            &format!("/api/v1/consumer-groups/lagging?minLagSeconds={q}"),
            None,
        );
        assert_eq!(status, 400, "minLagSeconds={q}");
    }
    let (status, lagging) = send("GET", "/api/v1/consumer-groups/lagging", None);
    assert_eq!(status, 200);
    assert!(
        lagging.is_array(),
        "not the group called lagging: {lagging}"
    );
    for body in [
        json!({}),
        json!({"consumerGroup": "g", "entries": {}}),
        json!({"consumerGroup": "g", "entries": [{"partition": "p"}]}),
    ] {
        let (status, answer) = send("POST", "/api/v1/consumer-groups/positions", Some(&body));
        assert_eq!(status, 400, "{body}: {answer}");
    }
    let sub = "/api/v1/consumer-groups/g/subscription";
    for body in [json!({}), json!({"subscriptionTimestamp": "soon"})] {
        let (status, answer) = send("POST", sub, Some(&body));
        assert_eq!(status, 400, "{body}: {answer}");
    }
}

/// The routes the front-end answers in Queen's shapes from the one name of
/// each operation: a group's subscription, a group deleted on a queue, a
/// queue deleted, the overview; a missing group or queue is a 200 that
/// changed nothing, as Queen's server answers it.
#[test]
fn queen_shaped_answers_come_from_the_one_name() {
    let queue = unique("onename");
    let group = unique("onename-g");
    let mut c = connect();
    push(&mut c, &json!([{"queue": queue, "payload": 1}]));
    pop(&mut c, &queue, Some(&group), 1, &json!({}));

    let sub = format!("/api/v1/consumer-groups/{group}/subscription");
    let ts = "2026-01-01T00:00:00Z";
    let (status, answer) = send("POST", &sub, Some(&json!({"subscriptionTimestamp": ts})));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"success": true, "consumerGroup": group, "newTimestamp": ts, "rowsUpdated": 1})
    );
    let none = unique("onename-none");
    let (status, answer) = send(
        "POST",
        &format!("/api/v1/consumer-groups/{none}/subscription"),
        Some(&json!({"subscriptionTimestamp": ts})),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["rowsUpdated"], 0, "{answer}");

    let missing = unique("onename-missing");
    let (status, answer) = send(
        "DELETE",
        &format!("/api/v1/consumer-groups/{group}/queues/{missing}"),
        None,
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"success": true, "consumerGroup": group, "deletedPartitions": 0,
               "metadataDeleted": true, "queueName": missing})
    );
    let (status, answer) = send(
        "DELETE",
        &format!("/api/v1/consumer-groups/{group}/queues/{queue}?deleteMetadata=false"),
        None,
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"success": true, "consumerGroup": group, "deletedPartitions": 1,
               "metadataDeleted": false, "queueName": queue})
    );

    let (status, answer) = send("GET", "/api/v1/resources/overview", None);
    assert_eq!(status, 200, "{answer}");
    assert!(answer["queues"].as_i64().unwrap() >= 1, "{answer}");

    let (status, answer) = send("DELETE", &format!("/api/v1/resources/queues/{queue}"), None);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["deleted"], true, "{answer}");
    let (status, answer) = send("DELETE", &format!("/api/v1/resources/queues/{queue}"), None);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"success": true, "deleted": false, "queue": queue, "existed": false,
               "message": "Queue not found, nothing was deleted"})
    );
}

/// The dead-letter listing counts every match beside its page, through SQL
/// and HTTP, and the deprecated listing counted the same.
#[test]
fn the_dead_letter_listing_counts_every_match() {
    let queue = unique("matched");
    let mut c = connect();
    for n in 0..3 {
        push(
            &mut c,
            &json!([{"queue": queue, "payload": {"n": n}, "transactionId": format!("m-{n}")}]),
        );
        let popped = pop(&mut c, &queue, None, 1, &json!({}));
        ack(&mut c, &acks_for(&popped, "dlq", None));
    }
    let (status, page) = send("GET", &format!("/api/v1/dlq?queue={queue}&limit=2"), None);
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["messages"].as_array().unwrap().len(), 2, "{page}");
    assert_eq!(
        (page["total"].clone(), page["matched"].clone()),
        (json!(2), json!(3))
    );
    let old: Value = c
        .query_one(
            "SELECT queen.dlq_messages(jsonb_build_object('queue', $1::text, 'limit', 2))::jsonb",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(old["total"], 3, "{old}");
    let (status, empty) = send(
        "GET",
        &format!("/api/v1/dlq?queue={}", unique("none")),
        None,
    );
    assert_eq!(status, 200, "{empty}");
    assert_eq!(
        (empty["total"].clone(), empty["matched"].clone()),
        (json!(0), json!(0))
    );
}
