//! Hostile input and least privilege, through real connections: payloads
//! the engine must keep byte for byte (and that once stopped retention for
//! every queue), a step that fails on one partition, a dead-letter ack
//! racing the step that deletes its segment, decompression bombs, edge
//! values, the roles, and objects a database owner plants on the default
//! search_path.

use std::thread;
use std::time::{Duration, Instant};

use postgres::Client;
use queen_it::*;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// A message of a pop answer with its payload as the raw JSON it is.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMessage {
    transaction_id: String,
    partition_id: Option<String>,
    lease_id: Option<String>,
    data: Box<RawValue>,
}

#[derive(Deserialize)]
struct RawMessages {
    messages: Vec<RawMessage>,
}

fn raw_messages(answer: &str) -> Vec<RawMessage> {
    let parsed: RawMessages =
        serde_json::from_str(answer).unwrap_or_else(|e| panic!("answer parses: {e}"));
    parsed.messages
}

/// The payloads of an answer holding `messages`, by transaction id.
fn raw_payloads(answer: &str) -> std::collections::BTreeMap<String, String> {
    raw_messages(answer)
        .into_iter()
        .map(|m| (m.transaction_id, m.data.get().to_owned()))
        .collect()
}

/// The server's message of a failed statement.
fn message(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_else(|| e.to_string())
}

fn text(c: &mut Client, sql: &str, params: &[&(dyn postgres::types::ToSql + Sync)]) -> String {
    c.query_one(&format!("SELECT ({sql})::text"), params)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .get(0)
}

/// Payloads a push accepts that a value tree or jsonb can not hold as they
/// are: a NUL escape, a lone surrogate, deep nesting, a 10 MB document.
fn hostile_payloads() -> Vec<(String, String)> {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let big = format!(
        "{{\"blob\":\"{}\",\"tail\":[1,2,3]}}",
        "y".repeat(10 * 1024 * 1024)
    );
    vec![
        ("nul".into(), r#"{"s":"a\u0000b","k":1}"#.into()),
        (
            "surrogate".into(),
            r#"{"t":"\ud800 alone","order":{"b":1,"a":2}}"#.into(),
        ),
        ("deep".into(), deep),
        ("big".into(), big),
    ]
}

fn push_raw(c: &mut Client, queue: &str, payloads: &[(String, String)]) {
    let items: Vec<String> = payloads
        .iter()
        .map(|(txn, p)| {
            format!(
                r#"{{"queue":{},"transactionId":{},"payload":{p}}}"#,
                json!(queue),
                json!(txn)
            )
        })
        .collect();
    let body = format!("[{}]", items.join(","));
    let answer: Value = c
        .query_one("SELECT queen.push_text($1)", &[&body])
        .expect("push")
        .get(0);
    assert!(
        answer
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "queued"),
        "{answer}"
    );
}

fn segments(c: &mut Client, queue: &str) -> i64 {
    c.query_one(
        "SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
           JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1",
        &[&queue],
    )
    .unwrap()
    .get(0)
}

/// Every payload comes back byte-identical from pop, from the DLQ list
/// while its row points at the frame, after the retention workers carried
/// the row forward, and after a retry; and the workers' retention of an
/// unrelated queue goes on.
#[test]
fn hostile_payloads_come_back_byte_identical_and_never_stop_retention() {
    let mut c = connect();
    let queue = unique("poison");
    let healthy = unique("healthy");
    let payloads = hostile_payloads();
    c.query_one(
        "SELECT queen.configure($1, '{\"retentionEnabled\": true, \"retentionSeconds\": 1}')",
        &[&queue],
    )
    .unwrap();
    c.query_one(
        "SELECT queen.configure($1, '{\"retentionEnabled\": true, \"retentionSeconds\": 1}')",
        &[&healthy],
    )
    .unwrap();
    push_raw(&mut c, &queue, &payloads);
    push(
        &mut c,
        &json!([{"queue": healthy, "payload": {"fine": true}}]),
    );
    let want: std::collections::BTreeMap<String, String> = payloads.iter().cloned().collect();

    let popped = text(&mut c, "queen.pop($1, NULL, 'g', 10, '{}')", &[&queue]);
    assert_eq!(
        raw_payloads(&popped),
        want,
        "pop answers every payload as it was pushed"
    );
    let msgs = raw_messages(&popped);
    let pid = msgs[0].partition_id.clone().unwrap();
    let acks: Vec<Value> = msgs
        .iter()
        .map(|m| json!({"transactionId": m.transaction_id, "partitionId": m.partition_id, "leaseId": m.lease_id,
                        "status": "dlq", "consumerGroup": "g"}))
        .collect();
    let res = ack(&mut c, &Value::Array(acks));
    assert!(
        res.as_array()
            .unwrap()
            .iter()
            .all(|r| r["success"] == true && r["dlq"] == true),
        "{res}"
    );

    let listed = text(
        &mut c,
        "queen.dlq_messages(jsonb_build_object('queue', $1::text))",
        &[&queue],
    );
    assert_eq!(
        raw_payloads(&listed),
        want,
        "narrow dead letters answer their frames' payloads"
    );

    // The workers' cycles (every queen.retention_interval_ms) reclaim both.
    let deadline = Instant::now() + Duration::from_secs(60);
    while segments(&mut c, &queue) + segments(&mut c, &healthy) > 0 {
        assert!(
            Instant::now() < deadline,
            "the retention workers never reclaimed the segments"
        );
        thread::sleep(Duration::from_millis(200));
    }
    let last_error: Option<String> = c
        .query_one(
            "SELECT last_error FROM queen.maintenance_leases WHERE task = 'retention'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(last_error, None, "the cycle succeeded");
    let wide: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_dlq d JOIN queen.queues q ON q.id = d.queue_id
              WHERE q.name = $1 AND d.created_at IS NOT NULL AND d.payload IS NOT NULL",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        wide,
        payloads.len() as i64,
        "every dead letter was carried forward"
    );
    let listed = text(
        &mut c,
        "queen.dlq_messages(jsonb_build_object('queue', $1::text))",
        &[&queue],
    );
    assert_eq!(
        raw_payloads(&listed),
        want,
        "carried-forward dead letters answer the same bytes"
    );
    let one = text(
        &mut c,
        "queen.get_dlq_message($1::text::int8, 'nul')",
        &[&pid],
    );
    assert_eq!(raw_payloads(&one)["nul"], want["nul"]);

    let retried: Value = c
        .query_one(
            "SELECT queen.retry_failed_by_queue($1, 'g', 10)::jsonb",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        retried["retried"].as_array().unwrap().len(),
        payloads.len(),
        "{retried}"
    );
    let again = text(&mut c, "queen.pop($1, NULL, 'g', 10, '{}')", &[&queue]);
    assert_eq!(
        raw_payloads(&again),
        want,
        "a retried message is delivered with its payload as pushed"
    );
}

/// A binary push body (QPB1) of one message holding `payload` as it is.
fn binary_push(queue: &str, payload: &[u8]) -> Vec<u8> {
    let group = queen_frames::push_body::PushGroup {
        queue: queue.to_owned(),
        partition: "Default".into(),
        messages: queen_frames::push_body::GroupMessages::Items(vec![
            queen_frames::push_body::PushItem {
                transaction_id: None,
                payload: payload.to_vec(),
            },
        ]),
    };
    queen_frames::push_body::encode_push_body(&[group], false).unwrap()
}

/// A payload the engine could not answer as it was sent is refused at the
/// push, naming the item; nothing is written.
#[test]
fn a_push_refuses_payloads_it_could_not_answer_as_sent() {
    let mut c = connect();
    let queue = unique("refuse");
    // Not UTF-8, in a binary push (the JSON text path can only carry UTF-8).
    let body = binary_push(&queue, b"\"\xff\xfe\"");
    let err = c
        .query_one("SELECT queen.push_binary($1)", &[&body])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22P03", "{err}");
    assert!(
        message(&err).contains("groups[0].items[0]") && message(&err).contains("UTF-8"),
        "{err}"
    );
    // jsonb can not hold a NUL: the jsonb entry point refuses it before the
    // engine sees it, with PostgreSQL's own SQLSTATE.
    let err = c
        .query_one(
            "SELECT queen.push($1::text::jsonb)",
            &[&format!(r#"[{{"queue":"{queue}","payload":"\u0000"}}]"#)],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22P05", "{err}");
    let err = c
        .query_one("SELECT queen.get_queue($1)", &[&queue])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "42704", "nothing was created: {err}");
}

fn backend_pid(c: &mut Client) -> i32 {
    c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0)
}

/// A dead-letter ack racing the retention step that deletes its message's
/// segment: the ack holds its segment until it commits, and the step never
/// waits on it while it holds the partition: it deletes the run of segments
/// below the held one and leaves the rest to a later step, which carries the
/// dead letter forward. A dead-lettering after the delete writes nothing and
/// says why. No dead letter ever points at nothing.
#[test]
fn a_dead_letter_racing_a_retention_step_is_carried_forward() {
    let mut c = connect();
    // No retention configured: only this test's own steps delete.
    let queue = unique("dlqrace");
    for n in 1..=3 {
        push(
            &mut c,
            &json!([{"queue": queue, "payload": {"n": n}, "transactionId": format!("r{n}")}]),
        );
    }
    let popped = pop(&mut c, &queue, Some("g"), 3, &json!({}));
    assert_eq!(messages(&popped).len(), 3, "{popped}");
    let pid: i64 = popped["messages"][0]["partitionId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let step_sql = "SELECT queen_internal.log_retention_step_v1($1, now(), NULL, 1000)::jsonb";
    let acks = acks_for(&popped, "dlq", Some("g"));

    // The second segment's message is being dead-lettered, not committed yet.
    let mut acker = connect();
    let mut tx = acker.transaction().unwrap();
    let r: Value = tx
        .query_one("SELECT queen.ack($1)", &[&json!([acks[1]])])
        .unwrap()
        .get(0);
    assert_eq!(r[0]["dlq"], true, "{r}");
    let started = Instant::now();
    let first: Value = c
        .query_one(step_sql, &[&pid])
        .expect("the step does not wait")
        .get(0);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the step waited on the ack"
    );
    assert_eq!(
        (first["deleted"].clone(), first["done"].clone()),
        (json!(1), json!(true)),
        "only the run below the held segment: {first}"
    );
    assert_eq!(segments(&mut c, &queue), 2);
    tx.commit().unwrap();

    let second: Value = c.query_one(step_sql, &[&pid]).unwrap().get(0);
    assert_eq!(second["deleted"], 2, "{second}");
    let row = c
        .query_one(
            "SELECT created_at IS NOT NULL, convert_from(payload, 'UTF8') FROM queen.log_dlq WHERE partition_id = $1 AND transaction_id = 'r2'",
            &[&pid],
        )
        .unwrap();
    assert!(row.get::<_, bool>(0), "the dead letter was carried forward");
    assert_eq!(
        row.get::<_, String>(1),
        r#"{"n": 2}"#,
        "the payload as the jsonb push stored it"
    );
    assert_eq!(segments(&mut c, &queue), 0);

    // The third message's segment is gone: dead-lettering it writes no row
    // that would point at nothing, and the answer says why.
    let r = ack(&mut c, &json!([acks[2]]));
    assert_eq!(r[0]["success"], true, "{r}");
    assert_eq!(r[0]["dlq"], false, "{r}");
    assert!(
        r[0]["warning"]
            .as_str()
            .unwrap()
            .contains("deleted by retention"),
        "{r}"
    );
    let rows: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_dlq WHERE partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    assert_eq!(rows, 1, "only the carried-forward dead letter");

    // A step refuses to run where its carry-forward could miss a dead letter.
    let mut rr = connect();
    let mut tx = rr
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .start()
        .unwrap();
    let err = tx.query_one(step_sql, &[&pid]).unwrap_err();
    assert_eq!(sqlstate(&err), "25000", "{err}");
}

/// Peak resident memory of a backend, from the kernel.
fn peak_rss_kb(pid: i32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("the backend runs on this machine");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmHWM")
}

/// Bodies of a few kB that would inflate to 256 MiB are refused before the
/// backend allocates more than the bound: a packed group, a compressed
/// body whose header states the size, a timer's payloadZstd.
#[test]
fn decompression_bombs_are_refused_within_the_bound() {
    use base64::Engine;
    let mut c = connect();
    let queue = unique("bomb");
    let bomb = queen_frames::compress_segment(&vec![0u8; 256 << 20]);
    assert!(bomb.len() < 64 * 1024, "the bomb is small: {}", bomb.len());
    let pid = backend_pid(&mut c);
    // Warm the backend so its baseline includes the extension itself.
    push(&mut c, &json!([{"queue": queue, "payload": 0}]));
    let before = peak_rss_kb(pid);

    let packed = queen_frames::push_body::PushGroup {
        queue: queue.clone(),
        partition: "Default".into(),
        messages: queen_frames::push_body::GroupMessages::Packed {
            count: 1,
            zstd: bomb.clone(),
        },
    };
    let body = queen_frames::push_body::encode_push_body(&[packed], false).unwrap();
    let err = c
        .query_one("SELECT queen.push_binary($1)", &[&body])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22P03", "{err}");
    assert!(
        message(&err).contains("queen.decompress_max_bytes"),
        "{err}"
    );

    let mut stated = b"QPB1\x01".to_vec();
    stated.extend_from_slice(&(256u32 << 20).to_le_bytes());
    stated.extend_from_slice(&bomb);
    let err = c
        .query_one("SELECT queen.push_binary($1)", &[&stated])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22P03", "{err}");
    assert!(
        message(&err).contains("queen.decompress_max_bytes"),
        "{err}"
    );

    let timer = json!({"operations": [{"op": "schedule", "queue": queue, "timerKey": "b", "delayMs": 0,
        "payload": base64::engine::general_purpose::STANDARD.encode(&bomb), "payloadZstd": true}]});
    let err = c
        .query_one("SELECT queen.timers($1)", &[&timer])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22P03", "{err}");

    let grown_mb = (peak_rss_kb(pid) - before) / 1024;
    assert!(grown_mb < 64, "the backend grew by {grown_mb} MiB");
    // Under the bound, the same kind of body is fine.
    let body = binary_push(&queue, b"{\"ok\":1}");
    c.query_one("SELECT queen.push_binary($1)", &[&body])
        .expect("a small body");
}

/// A fused call of many bodies that each fit the budget alone (a message of
/// 8 MiB, packed in a few kB) spends one budget over the whole call
/// (`queen.decompress_max_bytes`, 16 MiB): the bodies within it land, the
/// others are refused alone (22P03), and the backend's peak memory grows
/// by far less than the call would inflate (20 bodies, 160 MiB).
#[test]
fn a_fused_call_of_bombs_stays_within_one_budget() {
    const BODIES: usize = 20;
    let mut c = connect();
    let queue = unique("fused-bomb");
    // One message of 8 MiB of spaces in a JSON string, as a packed group's
    // frames.
    let payload = format!("\"{}\"", " ".repeat((8 << 20) - 2));
    let id = queen_frames::new_message_id();
    let txn = queen_frames::id_text(&id);
    let frame = queen_frames::FrameRef {
        flags: 0,
        message_id: id,
        trace_id: None,
        transaction_id: &txn,
        producer: None,
        payload: payload.as_bytes(),
    };
    let packed = queen_frames::segment::encode_segment(std::iter::once(&frame)).unwrap();
    assert!(
        packed.len() < 64 * 1024,
        "the body is small: {}",
        packed.len()
    );
    let body = queen_frames::push_body::encode_push_body(
        &[queen_frames::push_body::PushGroup {
            queue: queue.clone(),
            partition: "Default".into(),
            messages: queen_frames::push_body::GroupMessages::Packed {
                count: 1,
                zstd: packed,
            },
        }],
        false,
    )
    .unwrap();
    let pid = backend_pid(&mut c);
    push(&mut c, &json!([{"queue": queue, "payload": 0}]));
    let before = peak_rss_kb(pid);
    let bodies: Vec<Vec<u8>> = vec![body; BODIES];
    let binary = vec![true; BODIES];
    let answers: Value = c
        .query_one(
            "SELECT queen.push_fused($1, $2, NULL)::jsonb",
            &[&bodies, &binary],
        )
        .unwrap()
        .get(0);
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), BODIES);
    let landed = answers.iter().filter(|a| a.get("ok").is_some()).count();
    let refused: Vec<&Value> = answers.iter().filter(|a| a.get("ok").is_none()).collect();
    assert!(
        (1..=2).contains(&landed),
        "{landed} bodies of 8 MiB landed in a 16 MiB budget"
    );
    assert!(
        refused.iter().all(|a| a["sqlstate"] == "22P03"),
        "{refused:?}"
    );
    let grown_mb = (peak_rss_kb(pid) - before) / 1024;
    assert!(
        grown_mb < 64,
        "the backend grew by {grown_mb} MiB for a call of {BODIES} bodies"
    );
}

/// Edge values get 22023 (or 22001 for a name) naming the field; never an
/// internal error, an allocation, or an interval overflow.
#[test]
fn edge_values_are_refused_naming_the_field() {
    let mut c = connect();
    let queue = unique("edge");
    push(&mut c, &json!([{"queue": queue, "payload": 1}]));
    let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
    let deep_obj = format!("{}1{}", "{\"a\":".repeat(1000), "}".repeat(1000));
    let max = i64::MAX.to_string();
    let cases: Vec<(String, Vec<String>, &str, &str)> = vec![
        ("SELECT queen.pop($1, NULL, NULL, 2147483647)".into(), vec![queue.clone()], "22023", "batch"),
        ("SELECT queen.pop($1, NULL, NULL, 1, '{\"partitions\": 1000000000}')".into(), vec![queue.clone()], "22023", "partitions"),
        (format!("SELECT queen.configure($1, '{{\"leaseTime\": {max}}}')"), vec![queue.clone()], "22023", "leaseTime"),
        ("SELECT queen.configure($1, '{\"retryLimit\": -1}')".into(), vec![queue.clone()], "22023", "retryLimit"),
        ("SELECT queen.configure($1, '{\"leaseTime\": \"NaN\"}')".into(), vec![queue.clone()], "42804", "leaseTime"),
        // Beyond any float: refused as it is read, naming the argument.
        ("SELECT queen.configure($1, '{\"leaseTime\": 1e400}')".into(), vec![queue.clone()], "22023", "options"),
        (format!("SELECT queen.kv_set('edge', 'k', '1', {max})"), vec![], "22023", "ttlSeconds"),
        (format!("SELECT queen.timer_schedule($1, 'k', '1', {max})"), vec![queue.clone()], "22023", "delayMs"),
        (format!("SELECT queen.timer_schedule($1, 'k', '1', -{max})"), vec![queue.clone()], "22023", "delayMs"),
        (
            format!("SELECT queen.locks('{{\"operations\": [{{\"op\": \"acquire\", \"name\": \"l\", \"ttlSeconds\": {max}}}]}}')"),
            vec![],
            "22023",
            "ttlSeconds",
        ),
        ("SELECT queen.push(jsonb_build_array(jsonb_build_object('queue', $1::text, 'payload', 1)))".into(), vec!["q".repeat(3000)], "22001", "queue"),
        ("SELECT queen.pop($1)".into(), vec!["q".repeat(3000)], "22001", "queue"),
        ("SELECT queen.configure($1)".into(), vec!["q".repeat(3000)], "22001", "queue"),
        ("SELECT queen.configure('x', $1::text::jsonb)".into(), vec![deep.clone()], "22023", "options"),
        ("SELECT queen.configure('x', $1::text::jsonb)".into(), vec![deep_obj.clone()], "22023", "options"),
        ("SELECT queen.pop('x', NULL, NULL, 1, $1::text::jsonb)".into(), vec![deep_obj.clone()], "22023", "options"),
        ("SELECT queen.transaction($1::text::jsonb)".into(), vec![deep.clone()], "22023", "ops"),
        ("SELECT queen.ack($1::text::jsonb)".into(), vec![deep.clone()], "22023", "acks"),
        ("SELECT queen.kv($1::text::jsonb)".into(), vec![deep.clone()], "22023", "operations"),
        ("SELECT queen.kv_set('edge', 'k', $1::text::jsonb, 5)".into(), vec![deep.clone()], "22023", "value"),
        ("SELECT queen.timers($1::text::jsonb)".into(), vec![deep.clone()], "22023", "operations"),
        ("SELECT queen.locks($1::text::jsonb)".into(), vec![deep.clone()], "22023", "operations"),
        ("SELECT queen.dlq_messages($1::text::jsonb)".into(), vec![deep_obj.clone()], "22023", "options"),
        ("SELECT queen.consumer_group_seek('g', 'x', $1::text::jsonb)".into(), vec![deep_obj.clone()], "22023", "options"),
    ];
    for (sql, args, code, field) in cases {
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> = args
            .iter()
            .map(|a| a as &(dyn postgres::types::ToSql + Sync))
            .collect();
        let err = c.query_one(sql.as_str(), &params).map(|_| ()).unwrap_err();
        assert_eq!(sqlstate(&err), code, "{sql}: {err}");
        let msg = err.as_db_error().unwrap().message().to_owned();
        assert!(msg.contains(field), "{sql}: {msg:?} names {field}");
    }
    // A 200-deep document is a fine value for KV and comes back whole.
    let deep200 = format!("{}{}", "[".repeat(200), "]".repeat(200));
    c.query_one(
        "SELECT queen.kv_set('edge', 'deep', $1::text::jsonb, 60)",
        &[&deep200],
    )
    .expect("200 levels");
    let back: String = c
        .query_one("SELECT queen.kv_get('edge', 'deep')::text", &[])
        .unwrap()
        .get(0);
    assert!(back.contains(&deep200), "{back}");
}

/// A role created for a test, dropped with everything it owns at the end.
struct TestRole(String);

impl TestRole {
    fn new(prefix: &str, grants: &str) -> TestRole {
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let mut c = connect();
        c.batch_execute(&format!(
            "CREATE ROLE {name} LOGIN; {}",
            grants.replace("{role}", &name)
        ))
        .unwrap();
        TestRole(name)
    }

    fn connect(&self) -> Client {
        let dsn = format!("{} user={}", dsn(), self.0);
        Client::connect(&dsn, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting as {}: {e}", self.0))
    }
}

impl Drop for TestRole {
    fn drop(&mut self) {
        let mut c = connect();
        let _ = c.batch_execute(&format!(
            "DROP OWNED BY {0}; DROP ROLE IF EXISTS {0}",
            self.0
        ));
    }
}

/// A role holding only queen_app works the message path, KV, locks and
/// timers, and gets 42501 for tables, steps, admin calls and the limits.
#[test]
fn queen_app_works_the_message_path_and_nothing_else() {
    let role = TestRole::new("it_app", "GRANT queen_app TO {role};");
    let mut admin = connect();
    let queue = unique("roles");
    admin
        .query_one("SELECT queen.configure($1)", &[&queue])
        .unwrap();
    let mut c = role.connect();
    push(
        &mut c,
        &json!([{"queue": queue, "payload": {"n": 1}, "transactionId": "a1"}]),
    );
    let popped = pop(&mut c, &queue, Some("g"), 1, &json!({}));
    let r = ack(&mut c, &acks_for(&popped, "completed", Some("g")));
    assert_eq!(r[0]["success"], true, "{r}");
    c.query_one(
        "SELECT queen.kv_set('roles', $1, '{\"v\": 1}', 60)",
        &[&queue],
    )
    .unwrap();
    let v: Value = c
        .query_one("SELECT queen.kv_get('roles', $1)::jsonb", &[&queue])
        .unwrap()
        .get(0);
    assert_eq!(v["v"], 1, "{v}");
    c.query_one(
        "SELECT queen.timer_schedule($1, 't', '1', 60000)",
        &[&queue],
    )
    .unwrap();
    c.query_one("SELECT queen.locks('{\"operations\": [{\"op\": \"acquire\", \"name\": \"roles-lock\", \"ttlSeconds\": 5}]}')", &[]).unwrap();
    c.query_one("SELECT queen.list_queues()", &[]).unwrap();
    c.query_one("SELECT queen.dlq_messages('{}')", &[]).unwrap();
    let refused = [
        "SELECT count(*) FROM queen.log_segments",
        "SELECT count(*) FROM queen.queues",
        "UPDATE queen.queues SET retry_limit = 0",
        "SELECT queen_internal.retention_run_cycle()",
        "SELECT queen_internal.log_retention_step_v1(1, now(), NULL, 10)",
        "SELECT queen_internal.sweeper_run_once()",
        "SELECT queen.configure('roles-x', '{}')",
        "SELECT queen.retry_failed_by_queue('roles-x')",
        "SELECT queen.consumer_group_delete('g')",
        "SELECT queen.kv_quota('roles', 1, 1)",
        "SET queen.push_max_items = 1000000",
        "SET queen.decompress_max_bytes = 2000000000",
        "SET queen.malloc_keep_bytes = 0",
        "SET queen.push_known_partitions = 1000000",
    ];
    for sql in refused {
        let err = c.batch_execute(sql).unwrap_err();
        assert_eq!(sqlstate(&err), "42501", "{sql}: {err}");
    }
    let err = c
        .query_one("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "42501", "{err}");

    // What a long-polling front-end watches grows with every push.
    let before: i64 = c
        .query_one("SELECT queen.queue_version($1)", &[&queue])
        .unwrap()
        .get(0);
    push(&mut c, &json!([{"queue": queue, "payload": 2}]));
    let after: i64 = c
        .query_one("SELECT queen.queue_version($1)", &[&queue])
        .unwrap()
        .get(0);
    assert_eq!(after, before + 1);

    let admin_role = TestRole::new("it_admin", "GRANT queen_admin TO {role};");
    let mut a = admin_role.connect();
    a.query_one(
        "SELECT queen.configure($1, '{\"retryLimit\": 1}')",
        &[&queue],
    )
    .unwrap();
    a.query_one("SELECT queen_internal.retention_run_cycle()", &[])
        .unwrap();
    a.query_one("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
    let err = a
        .batch_execute("SELECT count(*) FROM queen.log_segments")
        .unwrap_err();
    assert_eq!(
        sqlstate(&err),
        "42501",
        "not even queen_admin reads the tables: {err}"
    );
}

/// Every function of the extension runs with its owner's rights and a
/// pinned search_path, and none is executable by PUBLIC.
#[test]
fn every_function_pins_its_search_path() {
    let mut c = connect();
    let rows = c
        .query(
            "SELECT p.oid::regprocedure::text, p.prosecdef, COALESCE(p.proconfig, '{}'),
                    has_function_privilege('public', p.oid, 'EXECUTE') AND NOT EXISTS (
                        SELECT 1 FROM aclexplode(COALESCE(p.proacl, acldefault('f', p.proowner))) a
                         WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE') IS NOT TRUE
               FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
               JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queen'",
            &[],
        )
        .unwrap();
    assert!(rows.len() > 50, "the extension's functions: {}", rows.len());
    for r in rows {
        let (name, definer, config): (String, bool, Vec<String>) = (r.get(0), r.get(1), r.get(2));
        assert!(definer, "{name} runs with its owner's rights");
        assert_eq!(
            config,
            vec!["search_path=pg_catalog, pg_temp".to_owned()],
            "{name}"
        );
        let acl: Option<String> = c
            .query_one(
                "SELECT proacl::text FROM pg_proc WHERE oid = $1::text::regprocedure",
                &[&name],
            )
            .unwrap()
            .get(0);
        let acl = acl.unwrap_or_default();
        assert!(
            !acl.contains("{=X") && !acl.contains(",=X"),
            "{name} is not executable by PUBLIC: {acl}"
        );
    }
}

/// Who may call what is one list: every function of schema `queen` is
/// callable by one of the group roles at least, `queen_operator` makes an
/// operator's changes and holds no more, and the function that applies the
/// list is callable by its owner alone.
#[test]
fn the_group_roles_hold_the_rights_of_their_use() {
    let mut c = connect();
    let unreachable: Vec<String> = c
        .query(
            "SELECT p.oid::regprocedure::text
               FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
               JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queen'
              WHERE p.pronamespace = 'queen'::regnamespace
                AND NOT EXISTS (
                    SELECT 1 FROM unnest(ARRAY['queen_app', 'queen_operator', 'queen_admin', 'pg_monitor']) r
                     WHERE has_function_privilege(r, p.oid, 'EXECUTE'))
              ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        unreachable.is_empty(),
        "functions no group role may call: {unreachable:?}"
    );
    let appliers: Vec<String> = c
        .query(
            "SELECT r FROM unnest(ARRAY['queen_app', 'queen_operator', 'queen_admin', 'pg_monitor']) r
              WHERE has_function_privilege(r, 'queen_internal.grant_rights()', 'EXECUTE')",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(appliers.is_empty(), "may apply the rights: {appliers:?}");

    let role = TestRole::new("it_operator", "GRANT queen_operator TO {role};");
    let queue = unique("operator");
    let mut o = role.connect();
    o.query_one("SELECT queen.configure($1)", &[&queue])
        .unwrap();
    o.query_one("SELECT queen.consumer_group_delete('g', $1)", &[&queue])
        .unwrap();
    for sql in [
        format!("SELECT queen.push('[{{\"queue\": \"{queue}\", \"payload\": 1}}]')"),
        format!("SELECT queen.retry_failed_by_queue('{queue}')"),
        "SELECT queen.kv_quota('operator', 1, 1)".to_owned(),
        "SELECT queen_internal.retention_run_cycle()".to_owned(),
        "SELECT queen_internal.grant_rights()".to_owned(),
        "SELECT count(*) FROM queen.queues".to_owned(),
    ] {
        let err = o.batch_execute(&sql).unwrap_err();
        assert_eq!(sqlstate(&err), "42501", "{sql}: {err}");
    }
    o.query_one("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
}

/// A deprecated name says so in the catalogue and names the function to
/// call instead, which exists; it keeps its rights until it is removed.
#[test]
fn deprecated_names_point_to_the_one_name() {
    let mut c = connect();
    let rows = c
        .query(
            "SELECT p.proname::text, obj_description(p.oid, 'pg_proc')
               FROM pg_proc p
              WHERE p.pronamespace = 'queen'::regnamespace
                AND obj_description(p.oid, 'pg_proc') LIKE 'deprecated:%'
              ORDER BY 1",
            &[],
        )
        .unwrap();
    let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    for expected in [
        "consumer_group_drop",
        "consumer_group_set_timestamp",
        "delete_dlq_message",
        "dlq_messages",
        "delete_queue",
        "delete_queue_if_exists",
        "get_dlq_message",
        "get_queue",
        "list_queues",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    for r in rows {
        let (name, text): (String, String) = (r.get(0), r.get(1));
        let instead = text
            .strip_prefix("deprecated: call queen.")
            .and_then(|t| t.split(' ').next())
            .unwrap_or_else(|| panic!("{name}: {text}"));
        let exists: bool = c
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_proc
                                 WHERE pronamespace = 'queen'::regnamespace AND proname = $1)",
                &[&instead],
            )
            .unwrap()
            .get(0);
        assert!(exists, "{name} points to {instead}, which does not exist");
        assert!(text.ends_with("removed in 0.14.0"), "{name}: {text}");
    }
    // A renamed call answers as its new name does.
    let queue = unique("renamed");
    c.query_one("SELECT queen.configure($1)", &[&queue])
        .unwrap();
    let row = c
        .query_one(
            "SELECT queen.get_queue($1)::jsonb, queen.queue_get($1)::jsonb,
                    queen.list_queues()::jsonb, queen.queues_list()::jsonb",
            &[&queue],
        )
        .unwrap();
    let (old, new): (Value, Value) = (row.get(0), row.get(1));
    assert_eq!(old, new);
    let (old, new): (Value, Value) = (row.get(2), row.get(3));
    assert_eq!(old["total"], new["total"], "{old} {new}");
    let gone: Value = c
        .query_one("SELECT queen.queue_delete($1)::jsonb", &[&queue])
        .unwrap()
        .get(0);
    assert_eq!(gone["deleted"], true, "{gone}");
    let err = c
        .query_one("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "42704", "{err}");
}

/// Makes a role the owner of the database under test, and gives it back.
struct OwnsDatabase;

impl OwnsDatabase {
    fn new(role: &str) -> OwnsDatabase {
        connect().batch_execute(&format!("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I OWNER TO {role}', current_database()); END $$")).unwrap();
        OwnsDatabase
    }
}

impl Drop for OwnsDatabase {
    fn drop(&mut self) {
        let _ = connect().batch_execute("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I OWNER TO postgres', current_database()); END $$");
    }
}

/// A database owner who is not a superuser plants an operator in public,
/// the schema every session searches; the superuser workers and every
/// queen function never call it, though a session on the default path
/// does.
#[test]
fn an_operator_planted_in_public_is_never_called_by_queen() {
    // The database's owner may create in public (PostgreSQL 15 gives public
    // to pg_database_owner); it is handed back before the role is dropped.
    let owner = TestRole::new("it_owner", "");
    let _owned = OwnsDatabase::new(&owner.0);
    let mut o = owner.connect();
    o.batch_execute(&format!(
        "CREATE TABLE public.{0}_calls (at timestamptz DEFAULT now());
         CREATE FUNCTION public.{0}_div(bigint, numeric) RETURNS numeric LANGUAGE sql
             AS $$ INSERT INTO public.{0}_calls DEFAULT VALUES RETURNING 0::numeric $$;
         CREATE OPERATOR public./ (LEFTARG = bigint, RIGHTARG = numeric, FUNCTION = public.{0}_div);
         GRANT INSERT ON public.{0}_calls TO PUBLIC;",
        owner.0
    ))
    .unwrap();
    let calls = |c: &mut Client| -> i64 {
        c.query_one(
            &format!("SELECT count(*) FROM public.{}_calls", owner.0),
            &[],
        )
        .unwrap()
        .get(0)
    };
    let mut c = connect();
    // The trap works: a session on the default path resolves `bigint / numeric` to it.
    let _: postgres::Row = c.query_one("SELECT 7::bigint / 1000.0", &[]).unwrap();
    assert_eq!(
        calls(&mut c),
        1,
        "the planted operator is what the default path finds"
    );
    // queen's statements divide bigints by numerics (lease periods, delays).
    let queue = unique("trap");
    c.query_one("SELECT queen.timer_schedule($1, 'k', '1', 0)", &[&queue])
        .unwrap();
    c.query_one("SELECT queen_internal.retention_run_cycle()", &[])
        .unwrap();
    c.query_one(
        "SELECT queen_internal.maintenance_claim_v1('trap-task', 'it', 1000)",
        &[],
    )
    .unwrap();
    c.query_one("SELECT queen_internal.sweeper_run_once()", &[])
        .unwrap();
    // The workers: several retention polls (lease claims) and sweeper cycles.
    thread::sleep(Duration::from_secs(3));
    assert_eq!(
        calls(&mut c),
        1,
        "no queen function and no worker called the planted operator"
    );
    c.batch_execute("DROP OPERATOR public./ (bigint, numeric)")
        .unwrap();
}

/// CREATE EXTENSION into a schema named queen that another role owns fails,
/// and leaves nothing behind.
#[test]
fn create_extension_refuses_a_queen_schema_owned_by_another_role() {
    let other = TestRole::new("it_squatter", "");
    let db = format!("it_schema_{}", uuid::Uuid::new_v4().simple());
    let mut c = connect();
    c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    let result = std::panic::catch_unwind(|| {
        let dsn = format!("{} dbname={db}", dsn());
        let mut d = Client::connect(&dsn, postgres::NoTls).unwrap();
        d.batch_execute(&format!("CREATE SCHEMA queen AUTHORIZATION {}", other.0))
            .unwrap();
        let err = d.batch_execute("CREATE EXTENSION queen").unwrap_err();
        assert_eq!(sqlstate(&err), "42501", "{err}");
        assert!(message(&err).contains("belongs to another role"), "{err}");
        let n: i64 = d
            .query_one(
                "SELECT count(*) FROM pg_extension WHERE extname = 'queen'",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(n, 0);
        // Its own schema is fine.
        d.batch_execute("DROP SCHEMA queen; CREATE EXTENSION queen")
            .unwrap();
        let owner_ok: bool = d
            .query_one("SELECT nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) FROM pg_namespace WHERE nspname = 'queen'", &[])
            .unwrap()
            .get(0);
        assert!(owner_ok);
    });
    let _ = c.batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"));
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
