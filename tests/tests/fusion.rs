//! Request fusion through queen_front: many concurrent small requests,
//! answered as each alone would be (against a front-end with fusion off),
//! in order per partition, a bad body refused alone, a transaction id sent
//! twice stored once, each request's JWT subject stamped on its own
//! messages, and the fusion ratio in the Prometheus figures.

use std::sync::{Arc, Barrier};
use std::thread;

use postgres::Client;
use queen_it::{connect, http, unique};
use serde_json::{json, Value};

fn fused_base() -> String {
    http::base()
}

fn unfused_base() -> Option<String> {
    std::env::var("QUEEN_HTTP_UNFUSED").ok()
}

/// A POST of `body` (sent as it is, JSON or not) with an optional bearer
/// token: the status and the answer.
fn post(base: &str, path: &str, body: &str, auth: Option<&str>) -> (u16, Value) {
    let mut req = http::agent().post(&format!("{base}{path}"));
    if let Some(a) = auth {
        req = req.set("Authorization", a);
    }
    http::send_text(req, body)
}

/// The named series of a front-end's Prometheus figures, each as its
/// whole name (labels included).
fn prometheus(base: &str, series: &[String]) -> Vec<u64> {
    let text = ureq::get(&format!("{base}/metrics/prometheus"))
        .call()
        .expect("prometheus")
        .into_string()
        .unwrap();
    series
        .iter()
        .map(|s| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{s} ")))
                .unwrap_or_else(|| panic!("{s} missing in {text}"))
                .parse::<u64>()
                .unwrap()
        })
        .collect()
}

/// The push lane's (requests, calls) from a front-end's Prometheus figures.
fn push_lane(base: &str) -> (u64, u64) {
    let f = prometheus(
        base,
        &[
            "queen_front_fusion_requests_total{lane=\"push\"}".to_owned(),
            "queen_front_fusion_calls_total{lane=\"push\"}".to_owned(),
        ],
    );
    (f[0], f[1])
}

/// The push lane's call size histogram from a front-end's Prometheus
/// figures: (calls of at most one request, sum, count).
fn push_call_sizes(base: &str) -> (u64, u64, u64) {
    let m = "queen_front_fusion_call_requests";
    let f = prometheus(
        base,
        &[
            format!("{m}_bucket{{lane=\"push\",le=\"1\"}}"),
            format!("{m}_sum{{lane=\"push\"}}"),
            format!("{m}_count{{lane=\"push\"}}"),
        ],
    );
    (f[0], f[1], f[2])
}

/// Runs `f(k)` for k in 0..n on n threads released at once; the answers in
/// order of k.
fn at_once<T: Send + 'static>(n: usize, f: impl Fn(usize) -> T + Send + Sync + 'static) -> Vec<T> {
    let f = Arc::new(f);
    let start = Arc::new(Barrier::new(n));
    let threads: Vec<_> = (0..n)
        .map(|k| {
            let (f, start) = (Arc::clone(&f), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                f(k)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// Every message of a partition, in offset order, read through SQL.
fn partition_log(c: &mut Client, queue: &str, partition: &str) -> Vec<Value> {
    let popped: Value = c
        .query_one(
            "SELECT queen.pop($1, $2, 'reader', 10000, '{}')",
            &[&queue, &partition],
        )
        .unwrap()
        .get(0);
    popped["messages"].as_array().unwrap().clone()
}

#[test]
fn sixty_four_producers_keep_their_order_per_partition_and_fuse() {
    let base = fused_base();
    let (requests_before, calls_before) = push_lane(&base);
    let (alone_before, sum_before, count_before) = push_call_sizes(&base);
    let q = unique("fuse-order");
    const PRODUCERS: usize = 64;
    const EACH: usize = 25;
    let answers = {
        let (base, q) = (base.clone(), q.clone());
        at_once(PRODUCERS, move |p| {
            (0..EACH)
                .map(|s| {
                    let body = json!([{"queue": q, "partition": format!("p{}", p % 4),
                                       "payload": {"p": p, "s": s}}]);
                    post(&base, "/api/v1/push", &body.to_string(), None)
                })
                .collect::<Vec<_>>()
        })
    };
    for (status, answer) in answers.iter().flatten() {
        assert_eq!(*status, 201, "{answer}");
        assert_eq!(answer.as_array().unwrap().len(), 1, "{answer}");
        assert_eq!(answer[0]["status"], "queued", "{answer}");
        assert_eq!(answer[0]["index"], 0, "{answer}");
    }
    let mut c = connect();
    let mut total = 0;
    for part in 0..4 {
        let log = partition_log(&mut c, &q, &format!("p{part}"));
        total += log.len();
        let mut last = vec![-1i64; PRODUCERS];
        for m in &log {
            let (p, s) = (
                m["data"]["p"].as_u64().unwrap() as usize,
                m["data"]["s"].as_i64().unwrap(),
            );
            assert_eq!(p % 4, part);
            assert_eq!(
                s,
                last[p] + 1,
                "producer {p}'s messages out of order in p{part}"
            );
            last[p] = s;
        }
    }
    assert_eq!(total, PRODUCERS * EACH);
    let (requests_after, calls_after) = push_lane(&base);
    let requests = requests_after - requests_before;
    let calls = calls_after - calls_before;
    assert!(requests >= (PRODUCERS * EACH) as u64, "{requests}");
    assert!(
        calls < requests,
        "no request was fused: {calls} calls for {requests} requests"
    );
    // The histogram saw these requests, in calls of which some held more
    // than one (other tests may push meanwhile: only lower bounds hold).
    let (alone_after, sum_after, count_after) = push_call_sizes(&base);
    assert!(sum_after - sum_before >= (PRODUCERS * EACH) as u64);
    let counted = count_after - count_before;
    assert!(
        alone_after - alone_before < counted,
        "no call held more than one request: {counted} calls counted"
    );
}

/// An answer with what differs from one push to the next taken out: the
/// ids minted per push, the partition ids, the queue's name.
fn comparable(mut v: Value, queue: &str) -> Value {
    if let Some(items) = v.as_array_mut() {
        for item in items {
            let o = item.as_object_mut().unwrap();
            for key in ["messageId", "message_id", "partitionId"] {
                o.remove(key);
            }
            for key in ["queue", "queueName"] {
                if o.get(key) == Some(&json!(queue)) {
                    o.insert(key.into(), json!("Q"));
                }
            }
        }
    }
    if let Some(o) = v.as_object_mut() {
        if let Some(e) = o.get("error").and_then(Value::as_str).map(str::to_owned) {
            o.insert("error".into(), json!(e.replace(queue, "Q")));
        }
    }
    v
}

/// The bodies of one round: each to a partition of its own (so the order
/// in which they land does not change an offset), some good, some bad.
fn round(queue: &str) -> Vec<String> {
    let mut bodies = vec![
        json!([{"queue": queue, "partition": "a", "payload": 1, "transactionId": "t-a"}]).to_string(),
        json!({"items": [{"queue": queue, "partition": "b", "payload": 2, "transactionId": "t-b"},
                         {"queue": queue, "partition": "b", "payload": 3, "transactionId": "t-b"}]})
        .to_string(),
        "[".to_string(),
        json!([{"queue": queue, "partition": "c", "payload": {"deep": [1, 2]}, "transactionId": "t-c"},
               {"queue": queue, "partition": "c", "payload": null, "transactionId": "t-c2"}])
        .to_string(),
        json!([{"queue": "", "payload": 1}]).to_string(),
        json!([{"queue": queue, "partition": "d", "payload": 4, "transactionId": "x".repeat(2000)}])
            .to_string(),
        "[]".to_string(),
    ];
    for k in 0..8 {
        bodies.push(
            json!([{"queue": queue, "partition": format!("e{k}"), "payload": k,
                    "transactionId": format!("t-e{k}")}])
            .to_string(),
        );
    }
    bodies
}

#[test]
fn fused_answers_are_the_answers_each_request_gets_alone() {
    let Some(unfused) = unfused_base() else {
        return;
    };
    let base = fused_base();
    for r in 0..5 {
        let alone_q = unique(&format!("alone{r}"));
        let fused_q = unique(&format!("fused{r}"));
        let alone: Vec<(u16, Value)> = round(&alone_q)
            .iter()
            .map(|b| post(&unfused, "/api/v1/push", b, None))
            .collect();
        let bodies = Arc::new(round(&fused_q));
        let fused = {
            let (base, bodies) = (base.clone(), Arc::clone(&bodies));
            at_once(bodies.len(), move |k| {
                post(&base, "/api/v1/push", &bodies[k], None)
            })
        };
        for (k, ((sa, a), (sf, f))) in alone.into_iter().zip(fused).enumerate() {
            assert_eq!(sa, sf, "request {k}: {a} vs {f}");
            assert_eq!(
                comparable(a, &alone_q),
                comparable(f, &fused_q),
                "request {k} of round {r}"
            );
        }
    }
}

#[test]
fn a_bad_body_among_good_ones_is_refused_alone() {
    let base = fused_base();
    let q = unique("fuse-bad");
    let answers = {
        let (base, q) = (base.clone(), q.clone());
        at_once(40, move |k| {
            let body = match k % 4 {
                0 => "[{\"queue\": ".to_string(),
                _ => json!([{"queue": q, "partition": format!("p{}", k % 3), "payload": k}])
                    .to_string(),
            };
            post(&base, "/api/v1/push", &body, None)
        })
    };
    for (k, (status, answer)) in answers.iter().enumerate() {
        if k % 4 == 0 {
            assert_eq!(*status, 400, "{answer}");
            assert_eq!(answer["code"], "invalid_request", "{answer}");
            assert!(answer["error"].is_string(), "{answer}");
        } else {
            assert_eq!(*status, 201, "{answer}");
            assert_eq!(answer[0]["status"], "queued", "{answer}");
        }
    }
    let mut c = connect();
    let stored: i64 = c
        .query_one(
            "SELECT coalesce(sum(s.frame_count), 0)::int8 FROM queen.log_segments s \
             JOIN queen.log_partitions p ON p.id = s.partition_id \
             JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1",
            &[&q],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 30);
}

#[test]
fn a_transaction_id_pushed_by_concurrent_requests_is_stored_once() {
    let base = fused_base();
    let q = unique("fuse-dup");
    let answers = {
        let (base, q) = (base.clone(), q.clone());
        at_once(16, move |k| {
            let body = json!([{"queue": q, "payload": k, "transactionId": "only-once"}]);
            post(&base, "/api/v1/push", &body.to_string(), None)
        })
    };
    let queued: Vec<&Value> = answers
        .iter()
        .map(|(s, a)| {
            assert_eq!(*s, 201, "{a}");
            &a[0]
        })
        .collect();
    let first: Vec<&&Value> = queued.iter().filter(|a| a["status"] == "queued").collect();
    assert_eq!(first.len(), 1, "{queued:?}");
    for a in &queued {
        assert_eq!(a["messageId"], first[0]["messageId"]);
        assert_eq!(a["offset"], 0);
    }
    let mut c = connect();
    let log = partition_log(&mut c, &q, "Default");
    assert_eq!(log.len(), 1);
}

#[test]
fn each_request_is_stamped_with_its_own_jwt_subject() {
    let (Ok(base), Ok(secret)) = (
        std::env::var("QUEEN_HTTP_JWT"),
        std::env::var("QUEEN_HTTP_JWT_SECRET"),
    ) else {
        return;
    };
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let sign = move |sub: &str| {
        let token = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &json!({"sub": sub, "role": "read-write", "exp": exp}),
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap();
        format!("Bearer {token}")
    };
    let q = unique("fuse-jwt");
    let answers = {
        let q = q.clone();
        at_once(32, move |k| {
            let sub = format!("service-{}", k % 8);
            let body = json!([{"queue": q, "payload": {"sub": sub}}]);
            post(&base, "/api/v1/push", &body.to_string(), Some(&sign(&sub)))
        })
    };
    assert!(answers.iter().all(|(s, _)| *s == 201), "{answers:?}");
    let mut c = connect();
    let log = partition_log(&mut c, &q, "Default");
    assert_eq!(log.len(), 32);
    for m in &log {
        assert_eq!(m["producerSub"], m["data"]["sub"], "{m}");
    }
}

#[test]
fn with_fusion_off_every_request_is_its_own_call() {
    let Some(unfused) = unfused_base() else {
        return;
    };
    let before = push_lane(&unfused);
    let q = unique("fuse-off");
    let answers = {
        let q = q.clone();
        let base = unfused.clone();
        at_once(32, move |k| {
            let body = json!([{"queue": q, "partition": format!("p{}", k % 2), "payload": k}]);
            post(&base, "/api/v1/push", &body.to_string(), None)
        })
    };
    assert!(answers.iter().all(|(s, _)| *s == 201), "{answers:?}");
    // Its lanes never ran.
    assert_eq!(push_lane(&unfused), before);
    assert_eq!(before, (0, 0));
    let mut c = connect();
    assert_eq!(
        partition_log(&mut c, &q, "p0").len() + partition_log(&mut c, &q, "p1").len(),
        32
    );
}

#[test]
fn fused_acks_settle_each_request_and_refuse_a_stale_lease_alone() {
    let base = fused_base();
    let q = unique("fuse-ack");
    let mut c = connect();
    let items: Vec<Value> = (0..24)
        .map(|k| json!({"queue": q, "partition": format!("p{k}"), "payload": k}))
        .collect();
    queen_it::push(&mut c, &Value::Array(items));
    let popped: Vec<Value> = (0..24)
        .map(|k| {
            c.query_one(
                "SELECT queen.pop($1, $2, NULL, 1, '{}')",
                &[&q, &format!("p{k}")],
            )
            .unwrap()
            .get::<_, Value>(0)["messages"][0]
                .clone()
        })
        .collect();
    let popped = Arc::new(popped);
    let answers = {
        let (base, popped) = (base.clone(), Arc::clone(&popped));
        at_once(24, move |k| {
            let m = &popped[k];
            let lease = if k % 6 == 0 {
                json!("00000000-0000-0000-0000-000000000000")
            } else {
                m["leaseId"].clone()
            };
            let body = json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                              "leaseId": lease, "status": "completed"});
            post(&base, "/api/v1/ack", &body.to_string(), None)
        })
    };
    for (k, (status, answer)) in answers.iter().enumerate() {
        assert_eq!(*status, 200, "{answer}");
        let result = if answer.is_array() {
            &answer[0]
        } else {
            answer
        };
        assert_eq!(result["success"], k % 6 != 0, "{k}: {answer}");
    }
    let settled: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id \
             JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 AND lc.committed >= 0",
            &[&q],
        )
        .unwrap()
        .get(0);
    assert_eq!(settled, 20);
}

/// The backends of the database waiting on a lock in a call of `function`.
fn waiting_on_a_lock(c: &mut Client, function: &str) -> i64 {
    c.query_one(
        "SELECT count(*) FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'",
        &[&function],
    )
    .unwrap()
    .get(0)
}

/// One producer stuck on a partition another transaction holds stalls no
/// other producer of the front-end: pushes to other queues are answered
/// while it still waits for the lock, and it lands once the lock goes, in
/// order after the holder's message.
#[test]
fn a_push_waiting_on_a_held_partition_holds_up_no_other_push() {
    let base = fused_base();
    let (hot, cold) = (unique("hot"), unique("cold"));
    let push = |queue: &str, n: i64| {
        json!({"items": [{"queue": queue, "partition": "p", "payload": {"n": n}}]}).to_string()
    };
    let (status, answer) = post(&base, "/api/v1/push", &push(&hot, 0), None);
    assert_eq!(status, 201, "{answer}");
    let mut holder = connect();
    holder.batch_execute("BEGIN").unwrap();
    holder
        .execute(
            "SELECT queen.push($1::text::jsonb)",
            &[&json!([{"queue": hot, "partition": "p", "payload": {"n": 1}}]).to_string()],
        )
        .unwrap();
    let stuck = {
        let (base, body) = (base.clone(), push(&hot, 2));
        thread::spawn(move || post(&base, "/api/v1/push", &body, None))
    };
    let mut watch = connect();
    for _ in 0..200 {
        if waiting_on_a_lock(&mut watch, "queen.push") > 0 {
            break;
        }
        thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        waiting_on_a_lock(&mut watch, "queen.push") > 0,
        "the push to the held partition waits for its lock"
    );
    for n in 0..5 {
        let (status, answer) = post(&base, "/api/v1/push", &push(&cold, n), None);
        assert_eq!(status, 201, "{answer}");
    }
    assert!(
        !stuck.is_finished(),
        "the other pushes were answered while the held partition's push still waits"
    );
    holder.batch_execute("COMMIT").unwrap();
    let (status, answer) = stuck.join().unwrap();
    assert_eq!(status, 201, "{answer}");
    let ns: Vec<i64> = partition_log(&mut watch, &hot, "p")
        .iter()
        .map(|m| m["data"]["n"].as_i64().unwrap())
        .collect();
    assert_eq!(ns, [0, 1, 2]);
    assert_eq!(partition_log(&mut watch, &cold, "p").len(), 5);
}
