//! The operator's switches across sessions and over HTTP. One test, in a
//! binary of its own: a paused surface is paused for every session of the
//! database, so nothing else may run beside it.

use std::time::{Duration, Instant};

use postgres::Client;
use queen_it::{connect, messages, pop, sqlstate, unique};
use serde_json::{json, Value};

fn switches(c: &mut Client, surface: &str, changes: Option<Value>) -> Value {
    c.query_one(
        "SELECT queen.system_switches($1, $2)",
        &[&surface, &changes],
    )
    .expect("system_switches")
    .get(0)
}

fn try_push(c: &mut Client, queue: &str) -> Result<Value, postgres::Error> {
    c.query_one(
        "SELECT queen.push($1)",
        &[&json!([{"queue": queue, "payload": 1}])],
    )
    .map(|r| r.get(0))
}

/// The SQLSTATE and detail of a refusal.
fn refusal(e: &postgres::Error) -> (String, Option<String>) {
    (
        sqlstate(e),
        e.as_db_error().and_then(|d| d.detail().map(str::to_owned)),
    )
}

/// (status, retry-after, body) of `method path` against the plain front-end.
fn http(method: &str, path: &str, body: Option<&Value>) -> (u16, Option<String>, Value) {
    let req = queen_it::http::agent().request(method, &format!("{}{path}", queen_it::http::base()));
    let a = queen_it::http::send_full(req, body);
    (a.status, a.retry_after, a.body)
}

fn resume_everything(c: &mut Client) {
    switches(c, "maintenance", Some(json!({"enabled": false})));
    switches(c, "pop", Some(json!({"enabled": false})));
    switches(
        c,
        "kv-timers",
        Some(json!({"kv": true, "timersSchedule": true, "timersFire": true})),
    );
}

#[test]
fn switches_pause_every_session_from_their_commit_and_resume() {
    let mut a = connect();
    let mut b = connect();
    resume_everything(&mut a);
    let q = unique("switch");

    // Push maintenance: every session's pushes are refused once it commits.
    try_push(&mut b, &q).expect("a push before the switch");
    let on = switches(&mut a, "maintenance", Some(json!({"enabled": true})));
    assert_eq!(on["maintenanceMode"], true);
    assert_eq!(on["bufferedMessages"], 0);
    let e = try_push(&mut b, &q).expect_err("a push under maintenance");
    assert_eq!(refusal(&e), ("57000".into(), Some("push".into())));
    // Pops go on: the message pushed before the switch is delivered.
    assert_eq!(messages(&pop(&mut b, &q, None, 10, &json!({}))).len(), 1);
    // Over HTTP: 503, Retry-After, Queen's code.
    let (status, retry_after, body) = http(
        "POST",
        "/api/v1/push",
        Some(&json!({"items": [{"queue": q, "payload": 2}]})),
    );
    assert_eq!((status, body["code"].as_str()), (503, Some("maintenance")));
    assert!(retry_after.is_some());
    let (_, _, got) = http("GET", "/api/v1/system/maintenance", None);
    assert_eq!(got["maintenanceMode"], true);
    assert_eq!(got["popMaintenanceMode"], false);

    // A change not yet committed binds nobody else; one rolled back never does.
    switches(&mut a, "maintenance", Some(json!({"enabled": false})));
    try_push(&mut b, &q).expect("resumed");
    a.batch_execute("BEGIN").unwrap();
    switches(&mut a, "maintenance", Some(json!({"enabled": true})));
    try_push(&mut b, &q).expect("the pause is not committed yet");
    // The session that paused sees its own pause at once.
    a.batch_execute("SAVEPOINT s").unwrap();
    let e = try_push(&mut a, &q).expect_err("its own pause");
    assert_eq!(sqlstate(&e), "57000");
    a.batch_execute("ROLLBACK TO s").unwrap();
    a.batch_execute("ROLLBACK").unwrap();
    try_push(&mut b, &q).expect("the pause was rolled back");
    a.batch_execute("BEGIN").unwrap();
    switches(&mut a, "maintenance", Some(json!({"enabled": true})));
    a.batch_execute("COMMIT").unwrap();
    let e = try_push(&mut b, &q).expect_err("committed");
    assert_eq!(sqlstate(&e), "57000");
    switches(&mut a, "maintenance", Some(json!({"enabled": false})));

    // Pop maintenance: pops answer empty and write nothing.
    let waiting = messages(&pop(&mut b, &q, Some("g"), 100, &json!({}))).len();
    assert!(waiting >= 3, "{waiting}");
    let on = switches(&mut a, "pop", Some(json!({"enabled": true})));
    assert_eq!(on["popMaintenanceMode"], true);
    assert_eq!(
        messages(&pop(&mut b, &q, Some("h"), 100, &json!({}))).len(),
        0
    );
    let (status, _, _) = http(
        "GET",
        &format!("/api/v1/pop/queue/{q}?consumerGroup=h&wait=false&batch=10"),
        None,
    );
    assert_eq!(status, 204);
    switches(&mut a, "pop", Some(json!({"enabled": false})));
    assert_eq!(
        messages(&pop(&mut b, &q, Some("h"), 100, &json!({}))).len(),
        waiting
    );

    // KV: refused while paused; the answer names the surface.
    let kv =
        json!({"operations": [{"op": "put", "ns": "sw", "key": "k", "value": 1, "forever": true}]});
    b.query_one("SELECT queen.kv($1)", &[&kv]).expect("kv runs");
    let got = switches(&mut a, "kv-timers", Some(json!({"kv": false})));
    assert_eq!(got["kvEnabled"], false);
    assert_eq!(got["timersScheduleEnabled"], true);
    let e = b
        .query_one("SELECT queen.kv($1)", &[&kv])
        .expect_err("kv paused");
    assert_eq!(refusal(&e), ("57000".into(), Some("kv".into())));
    let (status, _, body) = http("POST", "/api/v1/kv", Some(&kv));
    assert_eq!((status, body["code"].as_str()), (503, Some("kv_disabled")));
    switches(&mut a, "kv-timers", Some(json!({"kv": true})));
    b.query_one("SELECT queen.kv($1)", &[&kv])
        .expect("kv resumed");

    // Timer schedules are refused, cancels are not.
    let tq = unique("switch-timer");
    let schedule = |c: &mut Client, key: &str, delay_ms: i64| {
        c.query_one(
            "SELECT queen.timer_schedule($1, $2, '{\"t\": 1}'::jsonb, $3)",
            &[&tq, &key, &delay_ms],
        )
        .map(|r| r.get::<_, Value>(0))
    };
    schedule(&mut b, "later", 3_600_000).expect("scheduled");
    switches(&mut a, "kv-timers", Some(json!({"timersSchedule": false})));
    let e = schedule(&mut b, "other", 3_600_000).expect_err("schedule paused");
    assert_eq!(
        refusal(&e),
        ("57000".into(), Some("timers_schedule".into()))
    );
    let cancelled: Value = b
        .query_one("SELECT queen.timer_cancel($1, 'later')", &[&tq])
        .expect("a cancel is never refused")
        .get(0);
    assert_eq!(cancelled["cancelled"], true);
    let (status, _, body) = http(
        "POST",
        "/api/v1/timers",
        Some(
            &json!({"operations": [{"op": "schedule", "queue": tq, "timerKey": "h",
            "payload": "eyJ0IjoxfQ==", "delayMs": 1000}]}),
        ),
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("timers_disabled"))
    );
    switches(&mut a, "kv-timers", Some(json!({"timersSchedule": true})));

    // A paused fire keeps a due timer waiting; the resume delivers it.
    switches(&mut a, "kv-timers", Some(json!({"timersFire": false})));
    schedule(&mut b, "due", 0).expect("scheduled while the fire is paused");
    std::thread::sleep(Duration::from_secs(2));
    let count = |c: &mut Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id \
             WHERE q.name = $1 AND COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) >= 0",
            &[&tq],
        )
        .unwrap()
        .get(0)
    };
    assert_eq!(count(&mut b), 0, "fired while paused");
    let got = switches(&mut a, "kv-timers", Some(json!({"timersFire": true})));
    assert_eq!(got["timersFireEnabled"], true);
    let start = Instant::now();
    while count(&mut b) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the resumed fire delivered nothing"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Bad input is refused and changes nothing.
    for (surface, changes) in [
        ("maintenance", json!({})),
        ("maintenance", json!({"enabled": "yes"})),
        ("kv-timers", json!({})),
        ("everything", json!({"enabled": true})),
    ] {
        let e = a
            .query_one(
                "SELECT queen.system_switches($1, $2)",
                &[&surface, &changes],
            )
            .expect_err("refused");
        assert!(
            ["22023", "42804"].contains(&sqlstate(&e).as_str()),
            "{surface} {changes}: {e}"
        );
    }
    let (status, _, body) = http("POST", "/api/v1/system/maintenance", Some(&json!({})));
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_request"))
    );
    let got = switches(&mut a, "maintenance", None);
    assert_eq!(got["maintenanceMode"], false);
    resume_everything(&mut a);
}
