//! Ephemeral queues over HTTP against queen_front: statuses and bodies of
//! every route, bad bodies (400 with JSON and Queen's code), a full queue
//! (429 `queue_full`), an unknown queue (404 `ephemeral_queue_not_found`),
//! a waiting pop, and the switch (503 `ephemeral_disabled` with
//! Retry-After). The switch is global, so the tests of this binary take
//! turns.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use queen_it::unique;
use serde_json::{json, Value};

static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn http(method: &str, path: &str, body: Option<&str>) -> (u16, Option<String>, Value) {
    let base = std::env::var("QUEEN_HTTP").unwrap_or_else(|_| "http://127.0.0.1:6633".into());
    let req = ureq::request(method, &format!("{base}{path}"));
    let res = match body {
        Some(b) => req.set("content-type", "application/json").send_string(b),
        None => req.call(),
    };
    let resp = match res {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("transport: {e}"),
    };
    let status = resp.status();
    let retry_after = resp.header("retry-after").map(str::to_owned);
    let text = resp.into_string().unwrap_or_default();
    let v = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    (status, retry_after, v)
}

fn post(path: &str, body: Value) -> (u16, Value) {
    let (s, _, v) = http("POST", path, Some(&body.to_string()));
    (s, v)
}

fn get(path: &str) -> (u16, Value) {
    let (s, _, v) = http("GET", path, None);
    (s, v)
}

#[test]
fn every_route_answers_in_queens_shape() {
    let _t = turn();
    let q = unique("eph-http");
    let (s, v) = post(
        "/api/v1/ephemeral/configure",
        json!({"queue": q, "options": {"maxLength": 3, "leaseSeconds": 5}}),
    );
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["options"], json!({"maxLength": 3, "leaseSeconds": 5}));
    assert_eq!(v["durability"], "unlogged");

    let (s, v) = post(
        "/api/v1/ephemeral/push",
        json!({"queue": q, "messages": [{"payload": {"a": 1}}, {"payload": 2}]}),
    );
    assert_eq!((s, v), (201, json!({"pushed": 2})));

    let (s, v) = get(&format!("/api/v1/ephemeral/pop?queue={q}&batch=5&group=g"));
    assert_eq!(s, 200);
    assert_eq!(v["queue"], q.as_str());
    let msgs = v["messages"].as_array().unwrap().clone();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["payload"], json!({"a": 1}));
    assert_eq!(msgs[0]["partition"], "Default");
    assert_eq!(msgs[0]["attempts"], 1);
    let id = msgs[0]["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("e:"), "{id}");

    let (s, v) = post(
        "/api/v1/ephemeral/ack",
        json!({"queue": q, "group": "g", "acks": [
            {"id": id},
            {"id": msgs[1]["id"], "status": "retry"},
            {"id": "e:ffff:Default:1"},
            {"id": "junk"},
        ]}),
    );
    assert_eq!(s, 200);
    let outcomes: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["acked", "redelivered", "stale", "unknown"]);

    let (s, v) = get(&format!("/api/v1/ephemeral/queues/{q}/depth?group=g"));
    assert_eq!(s, 200);
    assert_eq!(v["tier"], "declared");
    assert_eq!(v["group"], "g");
    assert_eq!(v["partitions"][0]["partition"], "Default");

    let (s, v) = get("/api/v1/ephemeral/queues");
    assert_eq!(s, 200);
    let row = v["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["queue"] == q.as_str())
        .cloned()
        .unwrap();
    assert_eq!(row["options"]["maxLength"], 3);
    assert_eq!(row["options"]["leaseSeconds"], 5);
    assert!(v["cellBytes"].as_i64().is_some());

    // Full under reject: 429 queue_full, nothing written.
    let (s, _) = post(
        "/api/v1/ephemeral/push",
        json!({"queue": q, "messages": [{"payload": 3}, {"payload": 4}]}),
    );
    assert_eq!(s, 201);
    let (s, v) = post(
        "/api/v1/ephemeral/push",
        json!({"queue": q, "messages": [{"payload": 5}]}),
    );
    assert_eq!(s, 429, "{v}");
    assert_eq!(v["code"], "queue_full");

    let (s, v) = post("/api/v1/ephemeral/reset", json!({"queue": q}));
    assert_eq!(s, 200);
    assert_eq!(v["queue"], q.as_str());
    assert_eq!(v["dropped"], 3);

    let (s, _, v) = http("DELETE", &format!("/api/v1/ephemeral/queue/{q}"), None);
    assert_eq!(
        (s, v),
        (200, json!({"queue": q, "deleted": true, "declared": true}))
    );
    let (s, v) = get(&format!("/api/v1/ephemeral/queues/{q}/depth"));
    assert_eq!(s, 404);
    assert_eq!(v["code"], "ephemeral_queue_not_found");
}

#[test]
fn an_empty_pop_answers_200_and_a_waiting_pop_takes_a_later_push() {
    let _t = turn();
    let q = unique("eph-wait");
    let (s, v) = get(&format!("/api/v1/ephemeral/pop?queue={q}"));
    assert_eq!((s, v), (200, json!({"queue": q, "messages": []})));
    let started = Instant::now();
    let (s, v) = get(&format!(
        "/api/v1/ephemeral/pop?queue={q}&wait=true&timeout=400"
    ));
    assert_eq!((s, v["messages"].clone()), (200, json!([])));
    assert!(started.elapsed() >= Duration::from_millis(350));

    let q2 = q.clone();
    let pusher = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        post(
            "/api/v1/ephemeral/push",
            json!({"queue": q2, "messages": [{"payload": "late"}]}),
        )
    });
    let started = Instant::now();
    let (s, v) = get(&format!(
        "/api/v1/ephemeral/pop?queue={q}&wait=true&timeout=10000"
    ));
    assert_eq!(s, 200);
    assert_eq!(v["messages"][0]["payload"], "late");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(pusher.join().unwrap().0, 201);
}

#[test]
fn bad_bodies_are_400_with_json() {
    let _t = turn();
    for (path, body) in [
        (
            "/api/v1/ephemeral/configure",
            r#"{"queue": "x", "options": {"nope": 1}}"#,
        ),
        ("/api/v1/ephemeral/configure", r#"{"options": {}}"#),
        (
            "/api/v1/ephemeral/configure",
            r#"{"queue": "x", "options": {"policy": 3}}"#,
        ),
        (
            "/api/v1/ephemeral/push",
            r#"{"queue": "x", "messages": "no"}"#,
        ),
        ("/api/v1/ephemeral/push", r#"{"queue": "", "messages": []}"#),
        ("/api/v1/ephemeral/push", r#"{"queue": "x""#),
        (
            "/api/v1/ephemeral/ack",
            r#"{"queue": "x", "acks": [{"id": "e:1:p:1", "status": "later"}]}"#,
        ),
        ("/api/v1/ephemeral/ack", r#"{"queue": "x"}"#),
        ("/api/v1/ephemeral/reset", r#"{}"#),
    ] {
        let (s, _, v) = http("POST", path, Some(body));
        assert_eq!(s, 400, "{path} {body}: {v}");
        assert_eq!(v["code"], "ephemeral_bad_request", "{path} {body}: {v}");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()));
    }
    for path in [
        "/api/v1/ephemeral/pop",
        "/api/v1/ephemeral/pop?queue=x&batch=zero",
        "/api/v1/ephemeral/pop?queue=x&batch=0",
        "/api/v1/ephemeral/pop?queue=x&wait=maybe",
        "/api/v1/ephemeral/pop?queue=x&timeout=-1",
    ] {
        let (s, v) = get(path);
        assert_eq!(s, 400, "{path}: {v}");
        assert_eq!(v["code"], "ephemeral_bad_request", "{path}: {v}");
    }
}

#[test]
fn the_switch_pauses_every_write_and_keeps_the_reads() {
    let _t = turn();
    let q = unique("eph-switch");
    post(
        "/api/v1/ephemeral/push",
        json!({"queue": q, "messages": [{"payload": 1}]}),
    );
    let (s, v) = post("/api/v1/system/ephemeral", json!({"enabled": false}));
    assert_eq!(s, 200);
    assert_eq!(v["ephemeralEnabled"], false);
    assert_eq!(v["mirrored"], true);
    let refused: Vec<(u16, Option<String>, Value)> = vec![
        http(
            "POST",
            "/api/v1/ephemeral/push",
            Some(&json!({"queue": q, "messages": [{"payload": 2}]}).to_string()),
        ),
        http("GET", &format!("/api/v1/ephemeral/pop?queue={q}"), None),
        http(
            "POST",
            "/api/v1/ephemeral/configure",
            Some(&json!({"queue": q}).to_string()),
        ),
        http(
            "POST",
            "/api/v1/ephemeral/reset",
            Some(&json!({"queue": q}).to_string()),
        ),
        http("DELETE", &format!("/api/v1/ephemeral/queue/{q}"), None),
        http(
            "POST",
            "/api/v1/ephemeral/ack",
            Some(&json!({"queue": q, "acks": [{"id": "e:1:Default:1"}]}).to_string()),
        ),
    ];
    let (gs, gv) = get("/api/v1/system/ephemeral");
    let (ds, dv) = get(&format!("/api/v1/ephemeral/queues/{q}/depth"));
    let (ls, _) = get("/api/v1/ephemeral/queues");
    let (s, v) = post("/api/v1/system/ephemeral", json!({"enabled": true}));
    assert_eq!((s, v["ephemeralEnabled"].clone()), (200, json!(true)));
    for (status, retry_after, body) in refused {
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["code"], "ephemeral_disabled");
        assert!(retry_after.is_some());
    }
    assert_eq!(gs, 200);
    assert_eq!(gv["ephemeralEnabled"], false);
    assert!(gv["queues"].as_i64().unwrap() >= 1);
    assert_eq!((ds, dv["pending"].clone()), (200, json!(1)));
    assert_eq!(ls, 200);
    let (s, v) = get(&format!("/api/v1/ephemeral/pop?queue={q}&autoAck=true"));
    assert_eq!((s, v["messages"][0]["payload"].clone()), (200, json!(1)));
    let (s, v) = post("/api/v1/system/ephemeral", json!({"on": true}));
    assert_eq!((s, v["code"].clone()), (400, json!("invalid_request")));
}

/// Idle waiting pops of an ephemeral queue pop seldom (a pop is a write
/// transaction: each draws a transaction id), and a push made elsewhere
/// (in SQL, not through this front-end) reaches a waiter all the same: the
/// queue's poller reads its depth and wakes one.
#[test]
fn idle_waiting_pops_write_seldom_and_a_push_made_elsewhere_wakes_one() {
    let _t = turn();
    const WAITERS: usize = 10;
    let q = unique("eph-idle");
    let (s, _) = post(
        "/api/v1/ephemeral/push",
        json!({"queue": q, "messages": [{"payload": 0}]}),
    );
    assert_eq!(s, 201);
    let (_, v) = get(&format!("/api/v1/ephemeral/pop?queue={q}&autoAck=true"));
    assert_eq!(v["messages"].as_array().unwrap().len(), 1);
    let mut db = queen_it::connect();
    let xid = |db: &mut postgres::Client| -> i64 {
        db.query_one("SELECT txid_current()", &[]).unwrap().get(0)
    };
    // What the database draws meanwhile (its workers, the front-end's
    // reports), for three seconds without waiters.
    let before = xid(&mut db);
    std::thread::sleep(Duration::from_secs(3));
    let background = xid(&mut db) - before - 1;
    let before = xid(&mut db);
    let waiters: Vec<_> = (0..WAITERS)
        .map(|_| {
            let q = q.clone();
            std::thread::spawn(move || {
                get(&format!(
                    "/api/v1/ephemeral/pop?queue={q}&wait=true&timeout=6000&autoAck=true"
                ))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    let drawn = xid(&mut db) - before - 1 - background;
    // At a pop every 250 ms, ten waiters drew 120 in three seconds.
    assert!(
        drawn < 60,
        "{drawn} transaction ids drawn by {WAITERS} idle waiters in 3 s \
         ({background} drawn without them)"
    );
    db.query_one(
        "SELECT queen.ephemeral_push($1)",
        &[&json!({"queue": q, "messages": [{"payload": "elsewhere"}]})],
    )
    .unwrap();
    let got: Vec<Value> = waiters
        .into_iter()
        .flat_map(|w| {
            let (s, v) = w.join().unwrap();
            assert_eq!(s, 200);
            v["messages"].as_array().cloned().unwrap_or_default()
        })
        .collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["payload"], "elsewhere");
}
