//! queen_front against a real cluster: one test per route family and per
//! error class. `make test` starts the front-ends these use: a plain one,
//! one with JWT_SECRET, one whose database is unreachable, one whose long
//! polls are never rechecked by its poller, and one whose database
//! sessions are read-only.

use std::time::{Duration, Instant};

use queen_it::http::{agent, base, get, post, send};
use queen_it::unique;
use serde_json::{json, Value};

#[test]
fn health_answers() {
    let (status, body) = get("/health");
    assert_eq!(status, 200);
    assert_eq!(body["status"], "healthy");
}

/// Who may call what, read over HTTP as the database grants it: an
/// application's role pushes and reads, an operator's changes queues, the
/// monitoring role reads status, and the deprecated names say what to call.
#[test]
fn rights_over_http() {
    let (status, body) = get("/api/v1/resources/rights");
    assert_eq!(status, 200, "{body}");
    let functions = |role: &str| -> Vec<String> {
        body["roles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["role"] == role)
            .unwrap_or_else(|| panic!("{role} in {body}"))["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_owned())
            .collect()
    };
    let app = functions("queen_app");
    assert!(app.contains(&"push".to_owned()) && app.contains(&"rights".to_owned()));
    assert!(!app.contains(&"configure".to_owned()), "{app:?}");
    let operator = functions("queen_operator");
    assert!(operator.contains(&"configure".to_owned()), "{operator:?}");
    assert!(!operator.contains(&"push".to_owned()), "{operator:?}");
    let admin = functions("queen_admin");
    assert!(admin.contains(&"kv_quota".to_owned()) && admin.contains(&"push".to_owned()));
    assert!(functions("pg_monitor").contains(&"status".to_owned()));
    let deprecated = body["deprecated"].as_array().unwrap();
    let drop = deprecated
        .iter()
        .find(|d| d["name"] == "consumer_group_drop")
        .unwrap_or_else(|| panic!("{body}"));
    assert!(
        drop["note"]
            .as_str()
            .unwrap()
            .contains("queen.consumer_group_delete"),
        "{drop}"
    );
}

#[test]
fn push_pop_ack_over_http() {
    let q = unique("http");
    let (status, pushed) = post(
        "/api/v1/push",
        &json!({"items": [{"queue": q, "payload": {"n": 1}}, {"queue": q, "payload": {"n": 2}}]}),
    );
    assert_eq!(status, 201, "{pushed}");
    assert_eq!(pushed.as_array().unwrap().len(), 2);
    let (status, popped) = get(&format!("/api/v1/pop/queue/{q}?batch=2&wait=false"));
    assert_eq!(status, 200);
    let msgs = popped["messages"].as_array().unwrap().clone();
    assert_eq!(msgs.len(), 2);
    let acks: Vec<Value> = msgs
        .iter()
        .map(|m| json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": "completed"}))
        .collect();
    let (status, acked) = post("/api/v1/ack/batch", &json!({"acknowledgments": acks}));
    assert_eq!(status, 200);
    assert!(
        acked
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["success"] == true),
        "{acked}"
    );
    // Nothing left: 204.
    let (status, _) = get(&format!("/api/v1/pop/queue/{q}?batch=2&wait=false"));
    assert_eq!(status, 204);
    let (status, counts) = get(&format!("/api/v1/resources/queues/{q}"));
    assert_eq!(status, 200, "{counts}");
    let (status, _) = send(
        agent().delete(&format!("{}/api/v1/resources/queues/{q}", base())),
        None,
    );
    assert_eq!(status, 200);
}

#[test]
fn a_long_poll_returns_when_a_push_lands() {
    let q = unique("poll");
    let started = Instant::now();
    let waiter = {
        let q = q.clone();
        std::thread::spawn(move || {
            get(&format!(
                "/api/v1/pop/queue/{q}?batch=1&wait=true&timeout=20000"
            ))
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    post(
        "/api/v1/push",
        &json!({"items": [{"queue": q, "payload": "wake"}]}),
    );
    let (status, body) = waiter.join().unwrap();
    assert_eq!(status, 200);
    assert_eq!(body["messages"][0]["data"], "wake");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "woken by the push, not by the timeout"
    );
    // An empty long poll ends at its timeout with 204.
    let (status, _) = get(&format!(
        "/api/v1/pop/queue/{}?wait=true&timeout=300",
        unique("empty")
    ));
    assert_eq!(status, 204);
}

#[test]
fn long_polls_on_every_thread_are_woken_by_pushes_served_on_others() {
    // Each waiter on its own connection: the front-end hands connections to
    // its threads in turn, so the waiters and the pusher sit on different
    // threads, and a wake has to cross from one to another.
    // This front-end's poller never rechecks within the test, so only the
    // push (and each woken waiter, passing the wake on) can end a wait.
    let front =
        std::env::var("QUEEN_HTTP_NO_POLL").unwrap_or_else(|_| "http://127.0.0.1:6639".into());
    let q = unique("polls");
    let started = Instant::now();
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let url = format!("{front}/api/v1/pop/queue/{q}?batch=1&wait=true&timeout=20000");
            std::thread::spawn(move || send(agent().get(&url), None))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let items: Vec<Value> = (0..4)
        .map(|n| json!({"queue": q, "partition": format!("p{n}"), "payload": {"n": n}}))
        .collect();
    let (status, _) = send(
        agent().post(&format!("{front}/api/v1/push")),
        Some(&json!({"items": items})),
    );
    assert_eq!(status, 201);
    let mut got: Vec<i64> = waiters
        .into_iter()
        .map(|w| {
            let (status, body) = w.join().unwrap();
            assert_eq!(status, 200, "every waiter gets a message: {body}");
            assert_eq!(body["messages"].as_array().unwrap().len(), 1, "{body}");
            body["messages"][0]["data"]["n"].as_i64().unwrap()
        })
        .collect();
    got.sort_unstable();
    assert_eq!(
        got,
        vec![0, 1, 2, 3],
        "each message went to exactly one waiter"
    );
    // A waiter left unwoken pops once more when its 20 s run out, and would
    // get its message then.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "woken by the push, not by their timeouts"
    );
    // More connections than threads at once: every one is served.
    let pushers: Vec<_> = (0..8)
        .map(|n| {
            let q = q.clone();
            let url = format!("{front}/api/v1/push");
            std::thread::spawn(move || {
                send(
                    agent().post(&url),
                    Some(&json!({"items": [{"queue": q, "partition": "more", "payload": n}]})),
                )
                .0
            })
        })
        .collect();
    assert!(pushers.into_iter().all(|p| p.join().unwrap() == 201));
}

#[test]
fn bad_input_is_a_4xx_with_a_json_body() {
    let resp = agent()
        .post(&format!("{}/api/v1/push", base()))
        .set("Content-Type", "application/json")
        .send_string("{not json");
    let (status, body) = match resp {
        Err(ureq::Error::Status(s, r)) => (s, r.into_json::<Value>().unwrap()),
        other => panic!("expected 400, got {other:?}"),
    };
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("malformed JSON"));
    let (status, body) = post("/api/v1/push", &json!({"items": [{"payload": 1}]}));
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap().contains("items[0].queue"),
        "{body}"
    );
    let (status, body) = post(
        "/api/v1/configure",
        &json!({"queue": unique("c"), "options": {"leaseTime": "long"}}),
    );
    assert_eq!(status, 400, "{body}");
    let (status, _) = get(&format!("/api/v1/pop/queue/{}?batch=abc", unique("q")));
    assert_eq!(status, 400);
    let (status, body) = send(
        agent().delete(&format!(
            "{}/api/v1/resources/queues/{}",
            base(),
            unique("ghost")
        )),
        None,
    );
    assert_eq!(
        status, 200,
        "a missing queue's delete succeeds, as Queen's: {body}"
    );
    assert_eq!(body["existed"], false);
    let (status, _) = send(
        agent()
            .post(&format!("{}/api/v1/push", base()))
            .set("Content-Type", "application/x-queen-push"),
        None,
    );
    assert_eq!(status, 400);
    // Oversize: refused before anything is written.
    let big = "x".repeat(17 * 1024 * 1024);
    let resp = agent()
        .post(&format!("{}/api/v1/push", base()))
        .set("Content-Type", "application/json")
        .send_string(&big);
    match resp {
        Err(ureq::Error::Status(413, r)) => assert!(r.into_json::<Value>().unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("larger than")),
        Err(ureq::Error::Transport(_)) => {} // the server may close the connection mid-upload
        other => panic!("expected 413, got {other:?}"),
    }
}

#[test]
fn a_stale_lease_in_a_transaction_is_a_conflict() {
    let q = unique("txn");
    post(
        "/api/v1/push",
        &json!({"items": [{"queue": q, "payload": 1}]}),
    );
    let (_, popped) = get(&format!("/api/v1/pop/queue/{q}?batch=1"));
    let m = &popped["messages"][0];
    let (status, body) = post(
        "/api/v1/transaction",
        &json!({"operations": [{"type": "ack", "transactionId": m["transactionId"], "partitionId": m["partitionId"],
                               "leaseId": "00000000-0000-4000-8000-000000000000"}]}),
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["success"], false);
    let (status, renewed) = post(
        &format!("/api/v1/lease/{}/extend", m["leaseId"].as_str().unwrap()),
        &json!({}),
    );
    assert_eq!(status, 200);
    assert_eq!(renewed["success"], true);
}

#[test]
fn dead_letters_over_http() {
    let q = unique("dlq");
    post(
        "/api/v1/push",
        &json!({"items": [{"queue": q, "payload": {"bad": 1}, "transactionId": "d-1"}]}),
    );
    let (_, popped) = get(&format!("/api/v1/pop/queue/{q}?batch=1"));
    let m = &popped["messages"][0];
    post(
        "/api/v1/ack",
        &json!({"transactionId": "d-1", "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": "dlq", "error": "boom"}),
    );
    let (status, dlq) = get(&format!("/api/v1/dlq?queue={q}"));
    assert_eq!(status, 200);
    assert_eq!(dlq["total"], 1);
    let pid = m["partitionId"].as_str().unwrap();
    let (status, one) = get(&format!("/api/v1/messages/{pid}/d-1"));
    assert_eq!(status, 200);
    assert_eq!(one["errorMessage"], "boom");
    assert_eq!(one["status"], "dead_letter");
    let (status, retried) = post(&format!("/api/v1/messages/{pid}/d-1/retry"), &json!({}));
    assert_eq!(status, 200);
    assert_eq!(retried["result"], "moved", "{retried}");
    assert_eq!(retried["dlqRowRemoved"], true);
    // The message itself is still live: deleting it works once.
    let delete = || {
        send(
            agent().delete(&format!("{}/api/v1/messages/{pid}/d-1", base())),
            None,
        )
    };
    assert_eq!(delete().0, 200);
    assert_eq!(delete().0, 404, "already deleted");
    let (status, metrics) = get("/metrics/prometheus");
    assert_eq!(status, 200);
    assert!(metrics
        .as_str()
        .unwrap()
        .contains("queen_queue_pruned_failed_total"));
    let (status, _) = get("/api/v1/analytics/retention");
    assert_eq!(status, 200);
    let (status, sizes) = get("/api/v1/analytics/postgres-stats");
    assert_eq!(status, 200);
    assert!(sizes.to_string().contains("queen.log_segments"));
}

#[test]
fn jwt_guards_routes_and_names_the_producer() {
    let Ok(base) = std::env::var("QUEEN_HTTP_JWT") else {
        return;
    };
    let secret = std::env::var("QUEEN_HTTP_JWT_SECRET").unwrap();
    let q = unique("jwt");
    let push = json!({"items": [{"queue": q, "payload": 1}]});
    let (status, body) = send(agent().post(&format!("{base}/api/v1/push")), Some(&push));
    assert_eq!(status, 401, "{body}");
    let (status, _) = send(
        agent()
            .post(&format!("{base}/api/v1/push"))
            .set("Authorization", "Bearer not.a.token"),
        Some(&push),
    );
    assert_eq!(status, 401);
    let sign = |claims: &Value| {
        let token = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            claims,
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap();
        format!("Bearer {token}")
    };
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    // A token without an expiry is refused; a read-only one may not push.
    let unbounded = sign(&json!({"sub": "billing-service", "role": "read-write"}));
    let (status, body) = send(
        agent()
            .post(&format!("{base}/api/v1/push"))
            .set("Authorization", &unbounded),
        Some(&push),
    );
    assert_eq!(
        (status, body["code"].clone()),
        (401, json!("unauthorized")),
        "{body}"
    );
    let reader = sign(&json!({"sub": "dashboard", "role": "read-only", "exp": exp}));
    let (status, body) = send(
        agent()
            .post(&format!("{base}/api/v1/push"))
            .set("Authorization", &reader),
        Some(&push),
    );
    assert_eq!(
        (status, body["code"].clone()),
        (403, json!("forbidden")),
        "{body}"
    );
    let auth = sign(&json!({"sub": "billing-service", "role": "read-write", "exp": exp}));
    let (status, _) = send(
        agent()
            .post(&format!("{base}/api/v1/push"))
            .set("Authorization", &auth),
        Some(&push),
    );
    assert_eq!(status, 201);
    let (status, popped) = send(
        agent()
            .get(&format!("{base}/api/v1/pop/queue/{q}?batch=1"))
            .set("Authorization", &auth),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(popped["messages"][0]["producerSub"], "billing-service");
}

#[test]
fn database_down_is_a_503_not_a_hang() {
    let Ok(base) = std::env::var("QUEEN_HTTP_DOWN") else {
        return;
    };
    let started = Instant::now();
    let (status, body) = send(agent().get(&format!("{base}/health")), None);
    assert_eq!(status, 503, "{body}");
    let (status, body) = send(
        agent().post(&format!("{base}/api/v1/push")),
        Some(&json!({"items": [{"queue": "q", "payload": 1}]})),
    );
    assert_eq!(status, 503, "{body}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn consumer_groups_over_http() {
    let q = unique("cg");
    post(
        "/api/v1/push",
        &json!({"items": [{"queue": q, "payload": 1}, {"queue": q, "payload": 2}]}),
    );
    let (_, popped) = get(&format!(
        "/api/v1/pop/queue/{q}?batch=2&consumerGroup=reporting"
    ));
    assert_eq!(popped["messages"].as_array().unwrap().len(), 2);
    let (status, groups) = get("/api/v1/consumer-groups");
    assert_eq!(status, 200);
    assert!(groups.to_string().contains("reporting"));
    let (status, _) = post(
        &format!("/api/v1/consumer-groups/reporting/queues/{q}/seek"),
        &json!({"position": "beginning"}),
    );
    assert_eq!(status, 200);
    let (_, again) = get(&format!(
        "/api/v1/pop/queue/{q}?batch=2&consumerGroup=reporting"
    ));
    assert_eq!(
        again["messages"].as_array().unwrap().len(),
        2,
        "seeking drops the lease and rewinds"
    );
    let (status, _) = send(
        agent().delete(&format!(
            "{}/api/v1/consumer-groups/reporting/queues/{q}?deleteMetadata=true",
            base()
        )),
        None,
    );
    assert_eq!(status, 200);
    let (status, body) = post(
        &format!("/api/v1/consumer-groups/reporting/queues/{q}/seek"),
        &json!({"position": "sideways"}),
    );
    assert_eq!(status, 400, "{body}");
}

#[test]
fn timers_over_http() {
    let q = unique("timer");
    let payload = "eyJ0IjoxfQ=="; // base64 of {"t":1}
    let (status, r) = post(
        "/api/v1/timers",
        &json!({"operations": [{"op": "schedule", "queue": q, "timerKey": "k1", "payload": payload, "delayMs": 0, "txn": "t-1"},
                               {"op": "schedule", "queue": q, "timerKey": "k2", "payload": payload, "delayMs": 3600000, "txn": "t-2"}]}),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["results"][0]["status"], "scheduled");
    let (status, cancelled) = send(
        agent().delete(&format!("{}/api/v1/timers/{q}/k2", base())),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(cancelled["status"], "cancelled");
    let (status, popped) = get(&format!(
        "/api/v1/pop/queue/{q}?batch=5&wait=true&timeout=10000"
    ));
    assert_eq!(status, 200);
    assert_eq!(popped["messages"][0]["data"], json!({"t": 1}));
    assert_eq!(popped["messages"][0]["transactionId"], "t-1");
    let (status, body) = post(
        "/api/v1/timers",
        &json!({"operations": [{"op": "schedule", "queue": q, "timerKey": "k3",
        "payload": payload, "delayMs": 0, "deliverAt": "2030-01-01T00:00:00Z"}]}),
    );
    assert_eq!(status, 400, "server-owned fields are refused: {body}");
}

#[test]
fn kv_and_locks_over_http() {
    let ns = unique("httpkv");
    let (status, r) = post(
        "/api/v1/kv",
        &json!({"operations": [
            {"op": "put", "ns": ns, "key": "k", "value": {"v": 1}, "ttlSeconds": 60},
            {"op": "putIfAbsent", "ns": ns, "key": "k", "value": 2, "ttlSeconds": 60},
            {"op": "get", "ns": ns, "key": "k"}
        ]}),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["results"][0]["applied"], true);
    assert_eq!(
        (
            r["results"][1]["applied"].clone(),
            r["results"][1]["reason"].clone()
        ),
        (json!(false), json!("exists")),
        "a verdict, not an error"
    );
    assert_eq!(r["results"][2]["value"], json!({"v": 1}));
    // The curl sugar.
    let (status, got) = get(&format!("/api/v1/kv/{ns}/k"));
    assert_eq!((status, got["found"].clone()), (200, json!(true)));
    let (status, put) = send(
        agent().put(&format!("{}/api/v1/kv/{ns}/a/b", base())),
        Some(&json!({"value": 7, "forever": true})),
    );
    assert_eq!(
        (status, put["applied"].clone(), put["key"].clone()),
        (200, json!(true), json!("a/b")),
        "{put}"
    );
    let (status, del) = send(
        agent().delete(&format!("{}/api/v1/kv/{ns}/a/b", base())),
        None,
    );
    assert_eq!((status, del["applied"].clone()), (200, json!(true)));
    // Error classes: bad input, too large, over quota; each writes nothing.
    let (status, bad) = post(
        "/api/v1/kv",
        &json!({"operations": [{"op": "put", "ns": ns, "key": "x", "value": 1}]}),
    );
    assert_eq!(
        (status, bad["code"].clone()),
        (400, json!("invalid_request")),
        "{bad}"
    );
    let big = "x".repeat(1_100_000);
    let (status, large) = post(
        "/api/v1/kv",
        &json!({"operations": [{"op": "put", "ns": ns, "key": "x", "value": big, "ttlSeconds": 5}]}),
    );
    assert_eq!(status, 413, "{large}");
    let quota_ns = unique("httpquota");
    post(
        "/api/v1/kv",
        &json!({"operations": [{"op": "put", "ns": quota_ns, "key": "a", "value": 1, "forever": true}]}),
    );
    let mut c = queen_it::connect();
    c.query_one("SELECT queen.kv_quota($1, 1, NULL)", &[&quota_ns])
        .unwrap();
    c.query_one("SELECT queen_internal.kv_usage_rollup_v1()", &[])
        .unwrap();
    let (status, over) = post(
        "/api/v1/kv",
        &json!({"operations": [{"op": "put", "ns": quota_ns, "key": "b", "value": 1, "forever": true}]}),
    );
    assert_eq!(
        (status, over["code"].clone()),
        (403, json!("storage_quota_exceeded")),
        "{over}"
    );
    let (_, b) = get(&format!("/api/v1/kv/{quota_ns}/b"));
    assert_eq!(b["found"], false);

    let name = unique("httplock");
    let (status, a) = post(
        "/api/v1/locks",
        &json!({"operations": [{"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "one"}]}),
    );
    assert_eq!(status, 200, "{a}");
    let a = &a["results"][0];
    assert_eq!(a["acquired"], true);
    let (status, b) = post(
        "/api/v1/locks",
        &json!({"operations": [{"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "two"}]}),
    );
    assert_eq!(
        (
            status,
            b["results"][0]["acquired"].clone(),
            b["results"][0]["reason"].clone()
        ),
        (200, json!(false), json!("held"))
    );
    let (status, tx) = post(
        "/api/v1/transaction",
        &json!({"operations": [], "kv": [a["guard"], {"op": "incr", "ns": ns, "key": "n", "ttlSeconds": 60}]}),
    );
    assert_eq!((status, tx["success"].clone()), (200, json!(true)), "{tx}");
    let (status, bad) = post(
        "/api/v1/locks",
        &json!({"operations": [{"op": "acquire", "name": "has#hash", "ttlSeconds": 30}]}),
    );
    assert_eq!(status, 400, "{bad}");
}

/// The source of the front-end's routes: every file of
/// `queen_front/src/routes/`, where each area declares its routes.
fn routes_source() -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../queen_front/src/routes");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Every route of the front-end, as (method, path), read from the routes'
/// own source: a route added beside its handler is walked here without
/// anyone listing it again.
fn router_routes() -> Vec<(&'static str, String)> {
    let src = routes_source();
    let src = src.as_str();
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(at) = rest.find(".route(") {
        rest = &rest[at + ".route(".len()..];
        let open = rest.find('"').expect("a route's path");
        let close = open + 1 + rest[open + 1..].find('"').expect("a route's path ends");
        let path = rest[open + 1..close].to_owned();
        // The method router: what follows the path up to the call's close.
        let mut depth = 1;
        let end = rest
            .char_indices()
            .find_map(|(i, ch)| {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            })
            .expect("a route's call ends");
        let methods = rest[close + 1..end].trim_start_matches([',', ' ', '\n']);
        for m in ["get", "post", "put", "delete"] {
            let called = |p: &str| {
                methods.starts_with(p)
                    || methods.contains(&format!(".{p}"))
                    || methods.contains(&format!("::{p}"))
            };
            if called(&format!("{m}(")) {
                out.push((m, path.clone()));
            }
        }
    }
    out
}

/// The GETs that change state, as the front-end lists them
/// (`STATEFUL_GETS` in `queen_front/src/cors.rs`).
fn stateful_gets() -> Vec<String> {
    let src = include_str!("../../queen_front/src/cors.rs");
    let line = src
        .lines()
        .find(|l| l.starts_with("const STATEFUL_GETS"))
        .expect("STATEFUL_GETS is listed in cors.rs");
    let list = &line[line.find('=').unwrap()..];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Every GET route walked against a front-end whose database sessions are
/// read-only (`default_transaction_read_only`): PostgreSQL itself refuses
/// any write a GET makes (25006, answered `read_only`), whatever function
/// it calls, so the walk proves which GETs write. Those, and only those,
/// are the ones the front-end lists as changing state; and each of them is
/// refused to a cross-site caller, as every non-GET is.
#[test]
fn every_get_that_writes_is_listed_and_guarded() {
    let Ok(read_only) = std::env::var("QUEEN_HTTP_READ_ONLY") else {
        return;
    };
    let routes = router_routes();
    assert!(
        routes.len() > 60,
        "the router's routes were not read: {routes:?}"
    );
    let listed = stateful_gets();
    assert!(!listed.is_empty());
    // Something for every route to read: a queue of a namespace holding a
    // message, an ephemeral one too.
    let q = unique("walk");
    let ns = unique("walkns");
    let (status, body) = post(
        "/api/v1/configure",
        &json!({"queue": q, "options": {"namespace": ns}}),
    );
    assert!(status < 300, "{body}");
    let (status, pushed) = post(
        "/api/v1/push",
        &json!({"items": [{"queue": q, "partition": "p", "payload": {"n": 1}}]}),
    );
    assert_eq!(status, 201, "{pushed}");
    let pid = pushed[0]["partitionId"].as_str().unwrap_or("0").to_owned();
    let txn = pushed[0]["transactionId"]
        .as_str()
        .unwrap_or("t")
        .to_owned();
    let (status, body) = post(
        "/api/v1/ephemeral/push",
        &json!({"queue": q, "messages": [{"payload": 1}]}),
    );
    assert_eq!(status, 201, "{body}");
    let fill = |path: &str| -> String {
        let filled = path
            .replace("{queue}", &q)
            .replace("{partition}", "p")
            .replace("{partition_id}", &pid)
            .replace("{transaction_id}", &txn)
            .replace("{group}", "walkers")
            .replace("{file}", "app.js")
            .replace("{name}", "walk")
            .replace("{ns}", "walk")
            .replace("{*key}", "k")
            .replace("{*timer_key}", "k")
            .replace("{lease}", "00000000-0000-0000-0000-000000000000")
            .replace("{id}", "00000000-0000-0000-0000-000000000000");
        assert!(
            !filled.contains('{'),
            "a path parameter the walk does not fill: {path}"
        );
        let query = match path {
            "/api/v1/pop" => format!("?namespace={ns}&batch=1&wait=false"),
            "/api/v1/ephemeral/pop" => format!("?queue={q}&autoAck=true"),
            p if p.starts_with("/api/v1/pop/") => "?batch=1&wait=false".to_owned(),
            _ => String::new(),
        };
        format!("{filled}{query}")
    };
    let mut writing = Vec::new();
    for (method, path) in routes.iter().filter(|(m, _)| *m == "get") {
        let url = fill(path);
        let is_listed = listed.iter().any(|p| path.starts_with(p.as_str()));
        let mut answer = send(agent().get(&format!("{read_only}{url}")), None);
        // A pop refused just before released its locks only after its error
        // reached this side (PostgreSQL sends an ERROR before it aborts), so
        // the next pop may pass the partition by for that moment and find
        // nothing: nothing found is asked again, a little later.
        for _ in 0..10 {
            if !(is_listed && answer.0 == 204) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            answer = send(agent().get(&format!("{read_only}{url}")), None);
        }
        let (status, body) = answer;
        if body["code"] == "read_only" {
            writing.push(path.clone());
            assert!(
                is_listed,
                "{method} {path} writes ({status} {body}) but is not in STATEFUL_GETS"
            );
            // Refused to a cross-site caller on a front-end that may write.
            let (status, body) = send(
                agent()
                    .get(&format!("{}{url}", base()))
                    .set("Origin", "https://evil.example")
                    .set("Sec-Fetch-Site", "cross-site"),
                None,
            );
            assert_eq!(status, 403, "{method} {path} cross-site: {body}");
        } else {
            assert!(
                !is_listed,
                "{method} {path} is listed as changing state, yet wrote nothing: {status} {body}"
            );
        }
    }
    // Every listed prefix names a route that writes.
    for p in &listed {
        assert!(
            writing.iter().any(|w| w.starts_with(p.as_str())),
            "STATEFUL_GETS lists {p}, which no walked GET that writes starts with: {writing:?}"
        );
    }
}

/// The Prometheus text, scraped again (every 200 ms, for a minute at most)
/// until `wanted` holds of it.
fn scrape_until(wanted: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = ureq::get(&format!("{}/metrics/prometheus", base()))
            .call()
            .expect("the scrape")
            .into_string()
            .unwrap();
        if wanted(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "never scraped what was wanted:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The value of `series` (its name and labels) in the Prometheus `text`.
fn series_value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .map(|v| v.trim().parse::<f64>().unwrap())
        })
        .unwrap_or_else(|| panic!("{series} in\n{text}"))
}

/// The Prometheus text says when each background task last ran, how long
/// its last run took and whether it failed: the test cluster's retention
/// task runs every few seconds, so its last finish is recent. While a run
/// is under way its last run's duration is left out, so the scrape is made
/// again until one comes between two runs.
#[test]
fn the_prometheus_text_says_when_each_background_task_last_ran() {
    let text = scrape_until(|t| t.contains("queen_task_last_duration_seconds{task=\"retention\"}"));
    let value = |series: &str| series_value(&text, series);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let task = "{task=\"retention\"}";
    assert_eq!(value(&format!("queen_task_enabled{task}")), 1.0);
    assert_eq!(value(&format!("queen_task_failing{task}")), 0.0);
    let finished = value(&format!("queen_task_last_finished_timestamp_seconds{task}"));
    assert!(
        (now - 600.0..now + 5.0).contains(&finished),
        "the retention task last finished at {finished}, now is {now}"
    );
    let took = value(&format!("queen_task_last_duration_seconds{task}"));
    assert!((0.0..60.0).contains(&took), "{took}");
    assert!(text.contains("# TYPE queen_task_last_finished_timestamp_seconds gauge"));
}

/// The Prometheus text says, per queue and consumer group, how far behind
/// the group is (messages, and the age of the oldest it has not consumed)
/// and what it holds leased; how many timers are due; and what the last
/// retention cycle found due. The group listing is shared between scrapes
/// for a few seconds, so the scrape is made again until it shows the group.
#[test]
fn the_prometheus_text_says_how_far_each_group_is_behind() {
    let q = unique("lag");
    let items: Vec<Value> = (0..3).map(|i| json!({"queue": q, "payload": i})).collect();
    let (status, _) = post("/api/v1/push", &json!({ "items": items }));
    assert_eq!(status, 201);
    let (_, popped) = get(&format!("/api/v1/pop/queue/{q}?batch=1&consumerGroup=slow"));
    assert_eq!(popped["messages"].as_array().unwrap().len(), 1);
    std::thread::sleep(Duration::from_millis(1100));
    let labels = format!("{{queue=\"{q}\",group=\"slow\"}}");
    let text = scrape_until(|t| {
        t.contains(&format!("queen_group_lag_messages{labels}"))
            && t.contains("queen_retention_partitions_due ")
    });
    let value = |series: &str| series_value(&text, series);
    // One message leased, none acked: all three are still to consume.
    assert_eq!(value(&format!("queen_group_lag_messages{labels}")), 3.0);
    assert_eq!(
        value(&format!("queen_group_leased_partitions{labels}")),
        1.0
    );
    assert_eq!(
        value(&format!("queen_group_partitions_lagging{labels}")),
        1.0
    );
    let age = value(&format!("queen_group_lag_seconds{labels}"));
    assert!(
        (0.0..600.0).contains(&age),
        "the oldest unconsumed is {age} s old"
    );
    assert!(value("queen_timers_due ") >= 0.0);
    assert!(value("queen_retention_partitions_due ") >= 0.0);
    assert!(value("queen_retention_partitions_backed_off ") >= 0.0);
    assert!(text.contains("# TYPE queen_timers_fired_total counter"));
}
