//! The status and analytics routes against a real cluster: their
//! parameters (a bad `from` or `to` is a 400 with a code, a reversed range
//! too), Queen's keys, and a metrics sample run from SQL showing up in the
//! series.

use queen_it::http::{agent, base, get, send};
use queen_it::unique;
use serde_json::json;

fn dsn() -> String {
    std::env::var("QUEEN_TEST_DSN")
        .unwrap_or_else(|_| "host=127.0.0.1 port=6533 user=postgres dbname=queen".into())
}

fn sample() {
    let mut c = postgres::Client::connect(&dsn(), postgres::NoTls).unwrap();
    c.execute("SELECT queen_internal.metrics_sample()", &[])
        .unwrap();
}

/// What `route` answers once `done` holds of it, or after 10 s (200 OK).
fn sampled(route: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, body) = get(route);
        assert_eq!(status, 200, "{route}: {body}");
        if done(&body) || std::time::Instant::now() > deadline {
            return body;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

const RANGED: [&str; 8] = [
    "/api/v1/status",
    "/api/v1/status/analytics",
    "/api/v1/analytics/system-metrics",
    "/api/v1/analytics/worker-metrics",
    "/api/v1/analytics/queue-lag",
    "/api/v1/analytics/queue-ops",
    "/api/v1/analytics/retention",
    "/api/v1/status/queues",
];

#[test]
fn a_bad_range_is_a_400_naming_the_parameter() {
    for route in RANGED.iter().take(7) {
        let (status, body) = get(&format!("{route}?from=soon"));
        assert_eq!(status, 400, "{route}: {body}");
        assert_eq!(body["code"], "invalid_request", "{route}");
        assert!(
            body["error"].as_str().unwrap().starts_with("from:"),
            "{route}: {body}"
        );
        let (status, body) = get(&format!("{route}?to=2026-13-45"));
        assert_eq!(status, 400, "{route}: {body}");
        assert!(
            body["error"].as_str().unwrap().starts_with("to:"),
            "{route}: {body}"
        );
        let (status, body) = get(&format!(
            "{route}?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z"
        ));
        assert_eq!(status, 400, "{route}: {body}");
        assert_eq!(body["error"], "from: is after to");
        // An endless range is refused before any series is built.
        for bound in [
            "from=-infinity",
            "to=infinity",
            "from=-infinity&to=infinity",
        ] {
            let (status, body) = get(&format!("{route}?{bound}"));
            assert_eq!(status, 400, "{route}?{bound}: {body}");
            assert!(
                body["error"]
                    .as_str()
                    .unwrap()
                    .contains("is not a finite timestamp"),
                "{route}?{bound}: {body}"
            );
        }
    }
    let (status, body) = get("/api/v1/status/queues?limit=-1");
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().starts_with("limit:"));
}

#[test]
fn every_reader_answers_an_explicit_range() {
    for route in RANGED {
        let (status, body) = get(&format!(
            "{route}?from=2026-01-01T00:00:00Z&to=2026-01-01T06:00:00Z"
        ));
        assert_eq!(status, 200, "{route}: {body}");
    }
    let (_, s) = get("/api/v1/status?from=2026-01-01T00:00:00Z&to=2026-01-01T06:00:00Z");
    assert_eq!(s["bucketMinutes"], 5);
    assert_eq!(s["timeRange"]["from"], "2026-01-01T00:00:00.000Z");
    let (_, s) = get("/api/v1/status?from=2026-01-01T00:00:00Z&to=2026-01-03T00:00:00Z");
    assert_eq!(s["bucketMinutes"], 60);
}

#[test]
fn a_sample_shows_pushes_in_queue_ops_and_queue_lag() {
    let q = unique("st-ops");
    let (status, _) = send(
        agent().post(&format!("{}/api/v1/push", base())),
        Some(&json!({"items": [{"queue": q, "payload": 1}, {"queue": q, "payload": 2}]})),
    );
    assert_eq!(status, 201);
    let (status, popped) = get(&format!(
        "/api/v1/pop/queue/{q}?batch=2&wait=false&autoAck=true"
    ));
    assert_eq!(status, 200, "{popped}");
    sample();
    // The background sampler may have taken the counters first: what it
    // took shows once its transaction commits.
    let pushed = |ops: &serde_json::Value| -> i64 {
        ops["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pushMessages"].as_i64().unwrap())
            .sum()
    };
    let ops = sampled(&format!("/api/v1/analytics/queue-ops?queue={q}"), |ops| {
        pushed(ops) == 2
    });
    assert_eq!(ops["queues"], json!([q]));
    assert_eq!(pushed(&ops), 2, "{ops}");
    let lag = sampled(&format!("/api/v1/analytics/queue-lag?queue={q}"), |lag| {
        lag[0]["popCount"] == 2
    });
    let rows = lag.as_array().unwrap();
    assert!(!rows.is_empty(), "{lag}");
    assert_eq!(rows[0]["queueName"], q.as_str());
    assert_eq!(rows[0]["popCount"], 2);
    assert!(rows[0]["avgLagMs"].is_number());
    let (status, detail) = get(&format!("/api/v1/status/queues/{q}"));
    assert_eq!(status, 200);
    assert_eq!(detail["totals"]["messages"]["completed"], 2);
    let (status, missing) = get(&format!("/api/v1/status/queues/{}", unique("none")));
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["code"], "not_found");
}

#[test]
fn metrics_json_and_refresh() {
    let (status, m) = get("/metrics");
    assert_eq!(status, 200);
    assert!(m["uptime"].is_number(), "{m}");
    assert!(m["database"]["poolSize"].as_i64().unwrap() >= 1);
    let (status, r) = send(
        agent().post(&format!("{}/api/v1/stats/refresh", base())),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(r["engine"], "segments");
}
