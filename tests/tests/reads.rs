//! Resources, timer reads and reads by offset, at their edges: offsets below
//! the log start and past the end, unknown queues, empty and bad bodies,
//! limit clamps and page boundaries. SQL over a connection, and HTTP against
//! queen_front for the statuses and codes.

use std::time::Duration;

use postgres::Client;
use queen_it::http::{get, post};
use queen_it::{connect, sqlstate, unique};
use serde_json::{json, Value};

/// Pushes `n` messages to queue/partition in one call (one segment).
fn push_n(c: &mut Client, queue: &str, partition: &str, from: i64, n: i64) {
    let items: Vec<Value> = (from..from + n)
        .map(|i| json!({"queue": queue, "partition": partition, "payload": {"n": i}}))
        .collect();
    let _: Value = c
        .query_one("SELECT queen.push($1)", &[&json!({"items": items})])
        .expect("push")
        .get(0);
}

fn fetch(c: &mut Client, body: &Value) -> Value {
    let text: String = c
        .query_one("SELECT queen.fetch($1)::text", &[body])
        .expect("fetch")
        .get(0);
    serde_json::from_str(&text).expect("fetch answers JSON")
}

fn offsets(entry: &Value) -> Vec<i64> {
    entry["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["offset"].as_i64().unwrap())
        .collect()
}

#[test]
fn fetch_reads_from_an_offset_and_reports_the_bounds() {
    let mut c = connect();
    let q = unique("fetch");
    push_n(&mut c, &q, "p", 0, 3);
    push_n(&mut c, &q, "p", 3, 3);
    let a = fetch(
        &mut c,
        &json!({"entries": [
            {"queue": q, "partition": "p", "offset": 1},
            {"queue": q, "partition": "p", "offset": 6},
            {"queue": q, "partition": "p", "offset": 7},
            {"queue": q, "partition": "never", "offset": 0},
            {"queue": unique("nope"), "partition": "p", "offset": 0},
        ]}),
    );
    let e = a["entries"].as_array().unwrap();
    assert_eq!(e.len(), 5, "index-aligned: {a}");
    assert_eq!(offsets(&e[0]), vec![1, 2, 3, 4, 5]);
    assert_eq!(e[0]["records"][0]["payload"], json!({"n": 1}));
    assert!(e[0]["records"][0]["transactionId"].is_string());
    assert!(e[0]["records"][0]["ts"].is_string());
    assert_eq!(e[0]["highWatermark"], 6);
    assert_eq!(e[0]["logStartOffset"], 0);
    assert!(e[0].get("error").is_none());
    // At the end: nothing, no error. Past it: out of range.
    assert_eq!(offsets(&e[1]), Vec::<i64>::new());
    assert!(e[1].get("error").is_none());
    assert_eq!(e[2]["error"], "OFFSET_OUT_OF_RANGE");
    // A lane nothing was pushed to is an empty log, not an unknown one.
    assert_eq!(e[3]["highWatermark"], 0);
    assert!(e[3].get("error").is_none());
    assert_eq!(e[4]["error"], "UNKNOWN_TOPIC_OR_PARTITION");
    assert_eq!(e[4]["records"], json!([]));
}

#[test]
fn fetch_below_the_log_start_is_out_of_range() {
    let mut c = connect();
    let q = unique("fetch-start");
    push_n(&mut c, &q, "p", 0, 2);
    push_n(&mut c, &q, "p", 2, 2);
    // What retention does to the oldest segment: gone, the start moved.
    c.execute(
        "WITH p AS (SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                     WHERE q.name = $1 AND p.name = 'p')
         DELETE FROM queen.log_segments s USING p WHERE s.partition_id = p.id AND s.base_offset = 0",
        &[&q],
    )
    .unwrap();
    c.execute(
        "UPDATE queen.log_partitions p SET log_start = 2 FROM queen.queues q
          WHERE q.id = p.queue_id AND q.name = $1 AND p.name = 'p'",
        &[&q],
    )
    .unwrap();
    let a = fetch(
        &mut c,
        &json!({"entries": [{"queue": q, "partition": "p", "offset": 0},
                            {"queue": q, "partition": "p", "offset": 2}]}),
    );
    let e = &a["entries"];
    assert_eq!(e[0]["error"], "OFFSET_OUT_OF_RANGE");
    assert_eq!(e[0]["logStartOffset"], 2);
    assert_eq!(e[0]["highWatermark"], 4);
    assert_eq!(offsets(&e[1]), vec![2, 3]);
}

#[test]
fn fetch_budgets_always_deliver_a_first_record() {
    let mut c = connect();
    let q = unique("fetch-budget");
    push_n(&mut c, &q, "a", 0, 4);
    push_n(&mut c, &q, "b", 0, 4);
    let both = json!({"entries": [{"queue": q, "partition": "a", "offset": 0, "maxBytes": 1},
                                  {"queue": q, "partition": "b", "offset": 0, "maxBytes": 1}]});
    let a = fetch(&mut c, &both);
    assert_eq!(offsets(&a["entries"][0]), vec![0]);
    assert_eq!(offsets(&a["entries"][1]), vec![0]);
    // The call's budget spent by the first record: the next entry waits.
    let mut t = c.transaction().unwrap();
    t.execute("SET LOCAL queen.fetch_call_max_bytes = 1", &[])
        .unwrap();
    let text: String = t
        .query_one("SELECT queen.fetch($1)::text", &[&both])
        .unwrap()
        .get(0);
    let a: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(offsets(&a["entries"][0]), vec![0]);
    assert_eq!(offsets(&a["entries"][1]), Vec::<i64>::new());
    assert_eq!(a["entries"][1]["highWatermark"], 4);
    t.rollback().unwrap();
}

#[test]
fn fetch_bodies_refused_and_empty() {
    let q = unique("fetch-bad");
    let (status, body) = post("/api/v1/fetch", &json!({"entries": []}));
    assert_eq!((status, body), (200, json!({"entries": []})));
    let (status, body) = post("/api/v1/fetch", &json!({}));
    assert_eq!((status, body), (200, json!({"entries": []})));
    for bad in [
        json!({"entries": [{"queue": q, "offset": -1}]}),
        json!({"entries": [{"queue": q}]}),
        json!({"entries": [{"offset": 0}]}),
        json!({"entries": [{"queue": q, "partition": true, "offset": 0}]}),
        json!({"entries": {"queue": q}}),
        json!({"entries": [], "maxWaitMs": -5}),
        json!([1, 2]),
    ] {
        let (status, body) = post("/api/v1/fetch", &bad);
        assert_eq!(status, 400, "{bad} → {body}");
        assert_eq!(body["code"], "invalid_request", "{bad} → {body}");
    }
    let mut c = connect();
    let mut t = c.transaction().unwrap();
    t.execute("SET LOCAL queen.fetch_max_entries = 1", &[])
        .unwrap();
    let two = json!({"entries": [{"queue": q, "offset": 0}, {"queue": q, "offset": 0}]});
    let e = t.query_one("SELECT queen.fetch($1)", &[&two]).unwrap_err();
    assert_eq!(sqlstate(&e), "22023");
}

fn changed(c: &mut Client, entry: Value) -> Value {
    c.query_one(
        "SELECT queen.partitions_changed($1)::jsonb",
        &[&json!({ "entries": [entry] })],
    )
    .expect("changed")
    .get(0)
}

#[test]
fn partitions_changed_pages_by_name_and_by_time() {
    let mut c = connect();
    let q = unique("changed");
    for p in ["c", "a", "b"] {
        push_n(&mut c, &q, p, 0, 1);
    }
    let first = changed(&mut c, json!({"queue": q, "limit": 2}));
    assert!(first["safeTime"].is_string());
    let e = &first["entries"][0];
    let names: Vec<&str> = e["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let next = e["next"].as_str().expect("a cursor").to_owned();
    let second = changed(&mut c, json!({"queue": q, "limit": 2, "after": next}));
    let e = &second["entries"][0];
    assert_eq!(e["partitions"][0]["name"], "c");
    assert_eq!(e["partitions"].as_array().unwrap().len(), 1);
    assert_eq!(e["next"], Value::Null);
    // A name cursor in the time mode is refused for that entry.
    let bad = changed(
        &mut c,
        json!({"queue": q, "since": "2000-01-01T00:00:00Z", "after": next}),
    );
    assert_eq!(bad["entries"][0]["error"], "BAD_CURSOR");
    // By time: the order of the writes, paged.
    let since = changed(
        &mut c,
        json!({"queue": q, "since": "2000-01-01", "limit": 1}),
    );
    let e = &since["entries"][0];
    assert_eq!(e["partitions"][0]["name"], "c");
    let next = e["next"].as_str().unwrap().to_owned();
    let more = changed(
        &mut c,
        json!({"queue": q, "since": "2000-01-01", "limit": 1, "after": next}),
    );
    assert_eq!(more["entries"][0]["partitions"][0]["name"], "a");
    // Since the future: nothing.
    let none = changed(&mut c, json!({"queue": q, "since": "2999-01-01T00:00:00Z"}));
    assert_eq!(none["entries"][0]["partitions"], json!([]));
    let unknown = changed(&mut c, json!({"queue": unique("none")}));
    assert_eq!(unknown["entries"][0]["error"], "UNKNOWN_TOPIC_OR_PARTITION");
}

#[test]
fn partitions_changed_bodies_refused() {
    let many: Vec<Value> = (0..65).map(|_| json!({"queue": "q"})).collect();
    for bad in [
        json!({"entries": [{"queue": ""}]}),
        json!({"entries": [{"queue": "q", "since": "not a time"}]}),
        json!({ "entries": many }),
    ] {
        let (status, body) = post("/api/v1/partitions/changed", &bad);
        assert_eq!(status, 400, "{bad} → {body}");
        assert_eq!(body["code"], "invalid_request", "{body}");
    }
    let (status, body) = post("/api/v1/partitions/changed", &json!({}));
    assert_eq!(status, 200);
    assert_eq!(body["entries"], json!([]));
}

#[test]
fn timers_list_clamps_its_limit_and_pages() {
    let mut c = connect();
    let q = unique("timers");
    for k in ["b", "a/1", "c"] {
        let _: Value = c
            .query_one(
                "SELECT queen.timer_schedule($1, $2, '{}'::jsonb, 3600000)",
                &[&q, &k],
            )
            .unwrap()
            .get(0);
    }
    let list = |c: &mut Client, after: Option<&str>, limit: Option<i64>| -> Value {
        c.query_one(
            "SELECT queen.timers_list($1, $2, $3)::jsonb",
            &[&q, &after, &limit],
        )
        .unwrap()
        .get(0)
    };
    let keys = |v: &Value| -> Vec<String> {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["timerKey"].as_str().unwrap().to_owned())
            .collect()
    };
    // 0 is clamped to 1, never refused.
    let one = list(&mut c, None, Some(0));
    assert_eq!(keys(&one), ["a/1"]);
    assert_eq!(one["truncated"], true);
    assert_eq!(one["nextAfter"], "a/1");
    let rest = list(&mut c, Some("a/1"), None);
    assert_eq!(keys(&rest), ["b", "c"]);
    assert_eq!(rest["truncated"], false);
    assert_eq!(rest["nextAfter"], Value::Null);
    // A limit above the setting is clamped to it.
    let mut t = c.transaction().unwrap();
    t.execute("SET LOCAL queen.read_page_max_rows = 2", &[])
        .unwrap();
    let v: Value = t
        .query_one("SELECT queen.timers_list($1, NULL, 100000)::jsonb", &[&q])
        .unwrap()
        .get(0);
    assert_eq!(v["limit"], 2);
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    t.rollback().unwrap();
    // Over HTTP: peek a key with a slash, a miss, and a bad limit.
    let (status, body) = get(&format!("/api/v1/timers/{q}/a/1"));
    assert_eq!(status, 200);
    assert_eq!(body["found"], true);
    assert_eq!(body["timerKey"], "a/1");
    let (status, body) = get(&format!("/api/v1/timers/{q}/zz"));
    assert_eq!(status, 200);
    assert_eq!(body, json!({"found": false, "queue": q, "timerKey": "zz"}));
    let (status, body) = get(&format!("/api/v1/timers/{q}?limit=many"));
    assert_eq!(status, 400);
    assert_eq!(body["code"], "invalid_request");
}

#[test]
fn resources_of_an_unknown_queue_are_404() {
    let q = unique("none");
    for path in [
        format!("/api/v1/resources/queues/{q}"),
        format!("/api/v1/resources/queues/{q}/depth"),
        format!("/api/v1/resources/queues/{q}/depth?group=g"),
    ] {
        let (status, body) = get(&path);
        assert_eq!(status, 404, "{path} → {body}");
        assert_eq!(body["code"], "not_found");
    }
    let (status, body) = get(&format!("/api/v1/resources/partitions?queue={q}"));
    assert_eq!(status, 200);
    assert_eq!(body["partitions"], json!([]));
    let (status, body) = get("/api/v1/resources/partitions?limit=x");
    assert_eq!(status, 400, "{body}");
}

#[test]
fn depth_counts_a_group_and_the_worst_cursor() {
    let mut c = connect();
    let q = unique("depth");
    push_n(&mut c, &q, "p", 0, 5);
    let popped = queen_it::pop(&mut c, &q, Some("g"), 2, &json!({}));
    assert_eq!(queen_it::messages(&popped).len(), 2);
    let depth = |c: &mut Client, group: Option<&str>| -> Value {
        c.query_one("SELECT queen.queue_depth($1, $2)::jsonb", &[&q, &group])
            .unwrap()
            .get(0)
    };
    // Leased, not done: pending 5, processing 2, ready 3.
    let d = depth(&mut c, Some("g"));
    assert_eq!(
        (d["pending"].as_i64(), d["processing"].as_i64()),
        (Some(5), Some(2))
    );
    assert_eq!(d["ready"], 3);
    assert_eq!(d["partitions"][0]["ready"], 3);
    let _ = queen_it::ack(
        &mut c,
        &json!({"acknowledgments": queen_it::acks_for(&popped, "completed", Some("g"))}),
    );
    let d = depth(&mut c, Some("g"));
    assert_eq!(
        (d["pending"].as_i64(), d["processing"].as_i64()),
        (Some(3), Some(0))
    );
    assert_eq!(depth(&mut c, Some("other"))["pending"], 5);
    assert_eq!(depth(&mut c, None)["pending"], 3);
}

#[test]
fn kv_browse_lists_namespaces_and_pages_keys() {
    let ns = format!("browse-{}", uuid_suffix());
    let ops: Vec<Value> = ["a:1", "a:2", "a:3", "b:1"]
        .iter()
        .map(|k| json!({"op": "put", "ns": ns, "key": k, "value": {"k": k}, "forever": true}))
        .collect();
    let (status, body) = post("/api/v1/kv", &json!({ "operations": ops }));
    assert_eq!(status, 200, "{body}");
    let (status, body) = get("/api/v1/resources/kv/namespaces");
    assert_eq!(status, 200);
    let mine: Vec<&Value> = body
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["namespace"] == ns.as_str())
        .collect();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["keys"], 4);
    let (status, page) = post(
        "/api/v1/resources/kv/list",
        &json!({"namespace": ns, "prefix": "a:", "limit": 2}),
    );
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["rows"][0]["key"], "a:1");
    assert_eq!(page["rows"][0]["value"], json!({"k": "a:1"}));
    assert_eq!(page["truncated"], true);
    assert_eq!(page["nextAfter"], "a:2");
    let (_, rest) = post(
        "/api/v1/resources/kv/list",
        &json!({"namespace": ns, "prefix": "a:", "after": "a:2", "keysOnly": true}),
    );
    assert_eq!(rest["rows"].as_array().unwrap().len(), 1);
    assert_eq!(rest["rows"][0]["key"], "a:3");
    assert!(rest["rows"][0].get("value").is_none());
    assert_eq!(rest["truncated"], false);
    let (_, all) = post("/api/v1/resources/kv/list", &json!({"namespace": ns}));
    assert_eq!(all["rows"].as_array().unwrap().len(), 4);
    let (status, body) = post("/api/v1/resources/kv/list", &json!({}));
    assert_eq!(status, 400, "{body}");
}

fn uuid_suffix() -> String {
    unique("x").replace("x-", "")[..12].to_owned()
}

#[test]
fn a_waiting_fetch_returns_when_a_push_lands() {
    let mut c = connect();
    let q = unique("fetch-wait");
    push_n(&mut c, &q, "p", 0, 1);
    let body =
        json!({"entries": [{"queue": q, "partition": "p", "offset": 1}], "maxWaitMs": 10000});
    let pusher = {
        let q = q.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let (status, _) = post(
                "/api/v1/push",
                &json!({"items": [{"queue": q, "partition": "p", "payload": {"n": 1}}]}),
            );
            assert_eq!(status, 201);
        })
    };
    let started = std::time::Instant::now();
    let (status, answer) = post("/api/v1/fetch", &body);
    pusher.join().unwrap();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(offsets(&answer["entries"][0]), vec![1]);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // Nothing comes: the wait ends empty; an entry error ends it at once.
    let started = std::time::Instant::now();
    let idle = json!({"entries": [{"queue": q, "partition": "p", "offset": 2}], "maxWaitMs": 600});
    let (status, answer) = post("/api/v1/fetch", &idle);
    assert_eq!(status, 200);
    assert_eq!(answer["entries"][0]["records"], json!([]));
    assert!(started.elapsed() >= Duration::from_millis(500));
    let started = std::time::Instant::now();
    let past = json!({"entries": [{"queue": q, "partition": "p", "offset": 9}], "maxWaitMs": 5000});
    let (_, answer) = post("/api/v1/fetch", &past);
    assert_eq!(answer["entries"][0]["error"], "OFFSET_OUT_OF_RANGE");
    assert!(started.elapsed() < Duration::from_secs(3));
}
