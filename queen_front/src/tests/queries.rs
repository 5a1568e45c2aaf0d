//! Query parameters: what reaches the database for what the query string
//! says, and the JSON 400 that names the first bad parameter.

use axum::http::StatusCode;
use serde_json::{json, Value};

use super::fakepg::{FakePg, Reply, INT4, JSON, JSONB, TEXT};
use super::{app, bare, send};

const BOOL: u32 = 16;
const FLOAT8: u32 = 701;

fn jsonb(param: &Option<Vec<u8>>) -> Value {
    let bytes = param.as_deref().expect("a jsonb parameter");
    assert_eq!(bytes[0], 1, "jsonb version");
    serde_json::from_slice(&bytes[1..]).unwrap()
}

fn text(param: &Option<Vec<u8>>) -> Option<String> {
    param
        .as_deref()
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
}

async fn front(rules: Vec<(&str, Reply)>) -> (FakePg, axum::Router) {
    let pg = FakePg::start(rules).await;
    let app = app(&[("DATABASE_URL", &pg.url())]);
    (pg, app)
}

fn empty_pop() -> Reply {
    Reply::text(
        &[TEXT, TEXT, TEXT, INT4, JSONB],
        r#"{"success":true,"messages":[]}"#,
    )
}

#[tokio::test]
async fn a_pop_passes_its_parameters_on_by_the_rules_of_each() {
    let (pg, app) = front(vec![("queen.pop(", empty_pop())]).await;
    let uri = "/api/v1/pop/queue/q?batch=3&batch=5&wait=0&frames=false&timeout=\
               &autoAck=1&partitions=2&consumerGroup=&subscriptionMode=new\
               &subscriptionFrom=&namespace=n&task=&unknown=x";
    let answer = send(&app, bare("GET", uri)).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT, "{}", answer.body);
    let params = pg.params_of("queen.pop(").unwrap();
    assert_eq!(text(&params[0]).as_deref(), Some("q"));
    assert_eq!(params[1], None, "no partition");
    assert_eq!(params[2], None, "an empty consumer group is none");
    assert_eq!(
        params[3].as_deref(),
        Some(&5i32.to_be_bytes()[..]),
        "the last batch"
    );
    assert_eq!(
        jsonb(&params[4]),
        json!({"autoAck": true, "partitions": 2, "subscriptionMode": "new", "namespace": "n"})
    );
    // A filtered pop, the defaults.
    let answer = send(&app, bare("GET", "/api/v1/pop?wait&autoAck=false")).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT, "{}", answer.body);
    let params = pg.params_of("queen.pop(").unwrap();
    assert_eq!((params[0].clone(), params[1].clone()), (None, None));
    assert_eq!(
        params[3], None,
        "an absent batch is the extension's to choose"
    );
    assert_eq!(jsonb(&params[4]), json!({}));
    // An autopilot pop says so, and leaves batch and width unset.
    let answer = send(&app, bare("GET", "/api/v1/pop/queue/q?autopilot=true")).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT, "{}", answer.body);
    let params = pg.params_of("queen.pop(").unwrap();
    assert_eq!(params[3], None);
    assert_eq!(jsonb(&params[4]), json!({"autopilot": true}));
    let partition = send(&app, bare("GET", "/api/v1/pop/queue/q/partition/p?batch=2")).await;
    assert_eq!(partition.status, StatusCode::NO_CONTENT);
    let params = pg.params_of("queen.pop(").unwrap();
    assert_eq!(text(&params[1]).as_deref(), Some("p"));
}

#[tokio::test]
async fn the_first_bad_pop_parameter_is_a_json_400_naming_it() {
    let (pg, app) = front(vec![("queen.pop(", empty_pop())]).await;
    for (query, error) in [
        ("batch=abc", r#"batch: "abc" is not an integer"#),
        ("batch=1.5&wait=maybe", r#"batch: "1.5" is not an integer"#),
        (
            "wait=maybe&batch=3000000000",
            "batch: 3000000000 is out of range",
        ),
        (
            "frames=yes&wait=maybe",
            r#"wait: "maybe" is not true or false"#,
        ),
        (
            "timeout=5s&frames=yes",
            r#"frames: "yes" is not true or false"#,
        ),
        (
            "partitions=x&timeout=5s",
            r#"timeout: "5s" is not an integer"#,
        ),
        (
            "partitions=x&autoAck=TRUE",
            r#"autoAck: "TRUE" is not true or false"#,
        ),
        ("partitions=two", r#"partitions: "two" is not an integer"#),
    ] {
        let answer = send(&app, bare("GET", &format!("/api/v1/pop/queue/q?{query}"))).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(
            answer.body,
            json!({"success": false, "error": error, "code": "invalid_request"}),
            "{query}"
        );
    }
    assert!(
        pg.params_of("queen.pop(").is_none(),
        "the database was not asked"
    );
}

#[tokio::test]
async fn the_other_routes_read_their_parameters_as_before() {
    let (pg, app) = front(vec![
        ("queen.dlq_list(", Reply::json(&[JSONB], json!([]))),
        (
            "queen.kv(",
            Reply::json(&[JSONB], json!({"results": [{"applied": true}]})),
        ),
        (
            "queen.timers(",
            Reply::json(&[JSONB], json!({"results": [{"status": "cancelled"}]})),
        ),
        (
            "queen.consumer_group_delete(",
            Reply::json(&[TEXT, TEXT, BOOL], json!({"partitionsDeleted": 1})),
        ),
        (
            "queen.retention_series(jsonb_build_object(",
            Reply::json(&[FLOAT8, TEXT], json!({"series": []})),
        ),
        (
            "queen.retention_series(",
            Reply::json(&[TEXT], json!({"series": []})),
        ),
    ])
    .await;
    let get = |uri: &str| bare("GET", uri);
    let delete = |uri: &str| bare("DELETE", uri);
    // The dead letters: empty filters dropped, numbers checked.
    let uri = "/api/v1/dlq?queue=q&consumerGroup=&partition=p&from=a&to=&limit=10&offset=&x=1";
    assert_eq!(send(&app, get(uri)).await.status, StatusCode::OK);
    let params = pg.params_of("queen.dlq_list(").unwrap();
    assert_eq!(
        jsonb(&params[0]),
        json!({"queue": "q", "partition": "p", "from": "a", "limit": 10})
    );
    let answer = send(&app, get("/api/v1/dlq?offset=x&limit=y")).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.body["error"], r#"limit: "y" is not an integer"#);
    // A one-key delete: the version, when given, must be an integer.
    assert_eq!(
        send(&app, delete("/api/v1/kv/ns/a/b?expect=7"))
            .await
            .status,
        200
    );
    let op = jsonb(&pg.params_of("queen.kv(").unwrap()[0]);
    assert_eq!(
        op,
        json!({"operations": [{"op": "delete", "ns": "ns", "key": "a/b", "expect": 7}]})
    );
    send(&app, delete("/api/v1/kv/ns/k")).await;
    let op = jsonb(&pg.params_of("queen.kv(").unwrap()[0]);
    assert_eq!(op["operations"][0].get("expect"), None);
    for bad in ["", "x", "1.0"] {
        let answer = send(&app, delete(&format!("/api/v1/kv/ns/k?expect={bad}"))).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert_eq!(
            answer.body,
            json!({"success": false, "error": "expect: must be a version (an integer)",
                   "code": "invalid_request"})
        );
    }
    // A timer's cancel: the txn as given, null when absent.
    send(&app, delete("/api/v1/timers/q/t/1?txn=")).await;
    let ops = jsonb(&pg.params_of("queen.timers(").unwrap()[0]);
    assert_eq!(
        ops,
        json!({"operations": [{"op": "cancel", "queue": "q", "timerKey": "t/1", "txn": ""}]})
    );
    send(&app, delete("/api/v1/timers/q/t")).await;
    let ops = jsonb(&pg.params_of("queen.timers(").unwrap()[0]);
    assert_eq!(ops["operations"][0]["txn"], Value::Null);
    // A group's delete: deleteMetadata read as Queen reads it (false, 0
    // and no keep the subscription), anything unknown refused.
    for (query, metadata) in [
        ("", true),
        ("?deleteMetadata=false", false),
        ("?deleteMetadata=0", false),
        ("?deleteMetadata=no", false),
        ("?deleteMetadata=1", true),
        ("?deleteMetadata=yes", true),
        ("?deleteMetadata=", true),
        ("?deleteMetadata=false&deleteMetadata=true", true),
    ] {
        let uri = format!("/api/v1/consumer-groups/g/queues/q{query}");
        assert_eq!(send(&app, delete(&uri)).await.status, StatusCode::OK);
        let params = pg.params_of("queen.consumer_group_delete(").unwrap();
        assert_eq!(text(&params[1]).as_deref(), Some("q"));
        assert_eq!(params[2].as_deref(), Some(&[metadata as u8][..]), "{query}");
    }
    let refused = send(
        &app,
        delete("/api/v1/consumer-groups/g?deleteMetadata=maybe"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    send(
        &app,
        delete("/api/v1/consumer-groups/g?deleteMetadata=false"),
    )
    .await;
    let params = pg.params_of("queen.consumer_group_delete(").unwrap();
    assert_eq!(
        (params[1].clone(), params[2].clone()),
        (None, Some(vec![0]))
    );
    // The retention analytics: Queen's series without hours and bucket,
    // the parameters passed as one JSON object.
    let uri = "/api/v1/analytics/retention?from=2026-01-01T00:00:00Z&queue=q";
    assert_eq!(send(&app, get(uri)).await.status, StatusCode::OK);
    let params = pg.params_of("queen.retention_series(").unwrap();
    let given: serde_json::Value = serde_json::from_str(&text(&params[0]).unwrap()).unwrap();
    assert_eq!(given, json!({"from": "2026-01-01T00:00:00Z", "queue": "q"}));
    // With hours or bucket, the older shape from the same series: bucket
    // as given (hour when absent or empty), hours 24 when absent or empty.
    for (query, hours, bucket) in [
        ("?hours=", 24.0, "hour"),
        ("?bucket=&hours=", 24.0, "hour"),
        ("?bucket=day&hours=48", 48.0, "day"),
    ] {
        let uri = format!("/api/v1/analytics/retention{query}");
        assert_eq!(
            send(&app, get(&uri)).await.status,
            StatusCode::OK,
            "{query}"
        );
        let params = pg
            .params_of("queen.retention_series(jsonb_build_object(")
            .unwrap();
        assert_eq!(params[0].as_deref(), Some(&f64::to_be_bytes(hours)[..]));
        assert_eq!(text(&params[1]).as_deref(), Some(bucket));
    }
    let answer = send(&app, get("/api/v1/analytics/retention?hours=a")).await;
    assert_eq!(answer.body["error"], r#"hours: "a" is not an integer"#);
}

/// A listing whose answer holds a payload serde_json can not read back (a
/// lone surrogate escape, nesting deeper than 128 levels) goes to the
/// client as the extension wrote it, whether its type is json or jsonb.
#[tokio::test]
async fn a_listing_passes_on_a_payload_this_side_could_not_read() {
    let lone = r#"{"messages": [{"data": {"payload": "\ud800"}}]}"#;
    let deep = format!(
        r#"{{"messages": [{{"data": {}1{}}}]}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let row = |oid: u32, text: &str| Reply::Row {
        params: vec![JSONB],
        oid,
        value: text.as_bytes().to_vec(),
    };
    for oid in [JSON, JSONB] {
        let (_pg, app) = front(vec![
            ("queen.dlq_list(", row(oid, lone)),
            ("queen.messages_list(", row(oid, &deep)),
        ])
        .await;
        for (uri, want) in [
            ("/api/v1/dlq?queue=q", lone),
            ("/api/v1/dlq", lone),
            ("/api/v1/messages?queue=q", deep.as_str()),
        ] {
            let answer = send(&app, bare("GET", uri)).await;
            assert_eq!(
                answer.status,
                StatusCode::OK,
                "{uri} ({oid}): {}",
                answer.body
            );
            assert_eq!(
                answer.headers["content-type"], "application/json",
                "{uri} ({oid})"
            );
            // The test's own reader can not parse it either: the text as sent.
            assert_eq!(answer.body, Value::String(want.to_owned()), "{uri} ({oid})");
        }
    }
}
