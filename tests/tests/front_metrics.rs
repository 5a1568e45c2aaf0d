//! A front-end reports its own figures: a queen_front started here with
//! `QUEEN_METRICS_REPORT_MS=500` answers pushes, pops and acks, and its row
//! (`queen_front:<port>`) appears in `queen.worker_metrics` with those
//! counts and in `/api/v1/analytics/worker-metrics`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use queen_it::http::send;
use queen_it::{connect, dsn, unique};
use serde_json::{json, Value};

/// The front-end process, killed when the test ends however it ends.
struct Front {
    child: Child,
    url: String,
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test cluster's connection string, logging in as `queen_front`.
fn front_dsn() -> String {
    let all = dsn();
    let kept: Vec<&str> = all
        .split_whitespace()
        .filter(|kv| !kv.starts_with("user="))
        .collect();
    format!("{} user=queen_front", kept.join(" "))
}

fn start_front() -> Front {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bin = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/queen_front");
    let child = Command::new(bin)
        .env("DATABASE_URL", front_dsn())
        .env("HOST", "127.0.0.1")
        .env("PORT", port.to_string())
        .env("QUEEN_METRICS_REPORT_MS", "500")
        .env("QUEEN_THREADS", "2")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {bin}: {e}"));
    let front = Front {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let until = Instant::now() + Duration::from_secs(20);
    while ureq::get(&format!("{}/health", front.url)).call().is_err() {
        assert!(Instant::now() < until, "the front-end did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    front
}

fn call(front: &Front, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let agent = queen_it::http::agent();
    send(agent.request(method, &format!("{}{path}", front.url)), body)
}

/// The sums of the front's rows (a report may cross a minute).
fn row(worker: &str) -> Value {
    let mut c = connect();
    c.query_one(
        "SELECT jsonb_build_object(
                'rows', count(*),
                'push_request_count', sum(push_request_count),
                'push_message_count', sum(push_message_count),
                'pop_request_count', sum(pop_request_count),
                'pop_message_count', sum(pop_message_count),
                'pop_empty_count', sum(pop_empty_count),
                'ack_request_count', sum(ack_request_count),
                'ack_success_count', sum(ack_success_count),
                'ack_failed_count', sum(ack_failed_count),
                'transaction_count', sum(transaction_count),
                'pid', max(pid))
           FROM queen.worker_metrics WHERE worker_id = $1",
        &[&worker],
    )
    .unwrap()
    .get(0)
}

#[test]
fn a_front_reports_what_it_answered() {
    let front = start_front();
    let port = front.url.rsplit(':').next().unwrap().to_owned();
    let worker = format!("queen_front:{port}");
    let q = unique("frontmetrics");
    let items: Vec<Value> = (0..3)
        .map(|n| json!({"queue": q, "payload": {"n": n}}))
        .collect();
    let (status, pushed) = call(
        &front,
        "POST",
        "/api/v1/push",
        Some(&json!({"items": items})),
    );
    assert_eq!(status, 201, "{pushed}");
    let path = format!("/api/v1/pop/queue/{q}?batch=10&wait=false");
    let (status, popped) = call(&front, "GET", &path, None);
    assert_eq!(status, 200, "{popped}");
    let msgs = popped["messages"].as_array().unwrap().clone();
    assert_eq!(msgs.len(), 3);
    let (status, _) = call(&front, "GET", &path, None);
    assert_eq!(status, 204, "nothing left: an empty pop");
    let acks: Vec<Value> = msgs
        .iter()
        .enumerate()
        .map(|(k, m)| {
            json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                   "leaseId": m["leaseId"], "status": if k < 2 { "completed" } else { "failed" }})
        })
        .collect();
    let body = json!({"acknowledgments": acks});
    let (status, acked) = call(&front, "POST", "/api/v1/ack/batch", Some(&body));
    assert_eq!(status, 200, "{acked}");
    let want = json!({
        "rows": 1, "push_request_count": 1, "push_message_count": 3, "pop_request_count": 2,
        "pop_message_count": 3, "pop_empty_count": 1, "ack_request_count": 1,
        "ack_success_count": 2, "ack_failed_count": 1, "transaction_count": 0,
    });
    let until = Instant::now() + Duration::from_secs(15);
    let got = loop {
        let mut got = row(&worker);
        let pid = got.as_object_mut().unwrap().remove("pid");
        // A report that crossed a minute makes two rows; compare the sums.
        if got["rows"].as_i64() > Some(1) {
            got["rows"] = json!(1);
        }
        if got == want || Instant::now() > until {
            assert_eq!(pid, Some(json!(front.child.id())), "its own process id");
            break got;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(got, want);
    // The analytics route answers the front's figures under its worker id.
    let (status, series) = call(
        &front,
        "GET",
        &format!("/api/v1/analytics/worker-metrics?workerId={worker}"),
        None,
    );
    assert_eq!(status, 200, "{series}");
    let workers = series["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{series}");
    let w = &workers[0];
    assert_eq!(w["workerId"], worker.as_str());
    assert_eq!(w["pushMessages"], 3, "{w}");
    assert_eq!(w["popMessages"], 3, "{w}");
    assert_eq!(w["pushRequests"], 1, "{w}");
    assert_eq!(w["popRequests"], 2, "{w}");
    assert_eq!(w["ackRequests"], 1, "{w}");
    assert_eq!(w["ackFailed"], 1, "{w}");
    assert_eq!(series["summary"]["totalPushMessages"], 3, "{series}");
    // Further reports of nothing add nothing.
    std::thread::sleep(Duration::from_millis(1200));
    let mut again = row(&worker);
    again.as_object_mut().unwrap().remove("pid");
    if again["rows"].as_i64() > Some(1) {
        again["rows"] = json!(1);
    }
    assert_eq!(again, want);
}
