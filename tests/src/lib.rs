//! Helpers shared by the integration tests: connections to the cluster that
//! `make test` starts, and small wrappers over the SQL API.

pub mod http;

use std::sync::{Arc, Mutex};

use postgres::{Client, NoTls};
use serde_json::Value;

/// The cluster under test (`make test` starts one and sets this).
pub fn dsn() -> String {
    std::env::var("QUEEN_TEST_DSN")
        .unwrap_or_else(|_| "host=127.0.0.1 port=6533 user=postgres dbname=queen".to_owned())
}

pub fn connect() -> Client {
    Client::connect(&dsn(), NoTls).unwrap_or_else(|e| panic!("connecting to {}: {e}", dsn()))
}

/// A queue name no other test uses.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

pub fn push(c: &mut Client, items: &Value) -> Value {
    c.query_one("SELECT queen.push($1)", &[items])
        .expect("push")
        .get(0)
}

pub fn pop(c: &mut Client, queue: &str, group: Option<&str>, batch: i32, options: &Value) -> Value {
    c.query_one(
        "SELECT queen.pop($1, NULL, $2, $3, $4)",
        &[&queue, &group, &batch, options],
    )
    .expect("pop")
    .get(0)
}

pub fn ack(c: &mut Client, body: &Value) -> Value {
    c.query_one("SELECT queen.ack($1)", &[body])
        .expect("ack")
        .get(0)
}

pub fn messages(popped: &Value) -> Vec<Value> {
    popped["messages"].as_array().cloned().unwrap_or_default()
}

/// The acks that complete every message of a pop answer.
pub fn acks_for(popped: &Value, status: &str, group: Option<&str>) -> Value {
    Value::Array(
        messages(popped)
            .iter()
            .map(|m| {
                serde_json::json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                    "leaseId": m["leaseId"], "status": status, "consumerGroup": group})
            })
            .collect(),
    )
}

/// The SQLSTATE of a failed statement.
pub fn sqlstate(e: &postgres::Error) -> String {
    e.code()
        .map(|c| c.code().to_owned())
        .unwrap_or_else(|| format!("no SQLSTATE: {e}"))
}

/// The id of `queue`'s partition `partition`, read in the database that
/// holds it.
pub fn pid_of(c: &mut Client, queue: &str, partition: &str) -> i64 {
    c.query_one(
        "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 AND p.name = $2",
        &[&queue, &partition],
    )
    .unwrap()
    .get(0)
}

/// Makes everything of partition `pid` `age` old (a PostgreSQL interval),
/// as if it had been written then: for retention tests.
pub fn age_partition(c: &mut Client, pid: i64, age: &str) {
    c.batch_execute(&format!(
        "UPDATE queen.log_segments SET created_at = created_at - interval '{age}' WHERE partition_id = {pid};
         UPDATE queen.log_txns SET created_at = created_at - interval '{age}' WHERE partition_id = {pid};
         UPDATE queen.log_partitions SET oldest_live_at = oldest_live_at - interval '{age}',
                oldest_txn_at = oldest_txn_at - interval '{age}', last_write_at = last_write_at - interval '{age}',
                created_at = created_at - interval '{age}' WHERE id = {pid};"
    ))
    .unwrap();
}

/// Rows of the tables `tables` (names, e.g. `queen.log_partitions`) this
/// transaction has read so far, by index or by scan.
pub fn rows_read(t: &mut postgres::Transaction<'_>, tables: &[&str]) -> i64 {
    t.query_one(
        "SELECT COALESCE(sum(COALESCE(idx_tup_fetch, 0) + seq_tup_read), 0)::int8
           FROM pg_stat_xact_user_tables WHERE relid = ANY($1::text[]::regclass[])",
        &[&tables],
    )
    .unwrap()
    .get(0)
}

/// A session that keeps what the server says to it (from DEBUG1 up), and a
/// table of the user's own for it to write to.
pub fn noticed_session() -> (postgres::Client, Arc<Mutex<Vec<String>>>, String) {
    let notices = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&notices);
    let mut config: postgres::Config = dsn().parse().unwrap();
    config.notice_callback(move |n| sink.lock().unwrap().push(n.message().to_owned()));
    let mut c = config.connect(postgres::NoTls).unwrap();
    c.batch_execute("SET client_min_messages = debug1").unwrap();
    let table = format!("\"{}\"", unique("user_rows"));
    c.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .unwrap();
    (c, notices, table)
}

/// Runs `sql`; whether the server said something holding `words` meanwhile.
pub fn says(
    c: &mut postgres::Client,
    notices: &Mutex<Vec<String>>,
    sql: &str,
    words: &str,
) -> bool {
    notices.lock().unwrap().clear();
    c.batch_execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    notices.lock().unwrap().iter().any(|m| m.contains(words))
}

/// Minor page faults the backend of `c` has taken so far (from its
/// `/proc/self/stat`; a superuser's session).
pub fn minor_faults(c: &mut Client) -> i64 {
    let stat: String = c
        .query_one("SELECT pg_read_file('/proc/self/stat')", &[])
        .expect("reading the backend's /proc/self/stat")
        .get(0);
    // Fields after the command name, which is in parentheses: the minor
    // fault count is the 10th field of the line, the 8th after it.
    let after = &stat[stat.rfind(')').expect("a stat line") + 2..];
    after.split(' ').nth(7).unwrap().parse().unwrap()
}

/// Minor page faults per call of `f` on `c`'s backend, over `calls` calls
/// after five that warm it.
fn faults_per_call(c: &mut Client, calls: u32, f: &mut impl FnMut(&mut Client)) -> f64 {
    for _ in 0..5 {
        f(c);
    }
    let before = minor_faults(c);
    for _ in 0..calls {
        f(c);
    }
    (minor_faults(c) - before) as f64 / f64::from(calls)
}

/// Checks that `c`'s backend keeps its heap between calls of `f`: at most
/// `at_most` minor page faults per call, and more than four times as many
/// (or 4, with fewer than one kept) once `setting` (a `malloc_keep_bytes`)
/// is 0 and the backend gives its heap back after each call. `what` names
/// a call in the messages.
pub fn assert_heap_kept(
    c: &mut Client,
    setting: &str,
    at_most: f64,
    what: &str,
    mut f: impl FnMut(&mut Client),
) {
    let kept = faults_per_call(c, 100, &mut f);
    c.batch_execute(&format!("SET {setting} = 0")).unwrap();
    let given_back = faults_per_call(c, 100, &mut f);
    assert!(
        kept <= at_most,
        "{kept} page faults per {what} with the heap kept"
    );
    assert!(
        given_back > 4.0 * kept.max(1.0),
        "{given_back} page faults per {what} with the heap given back, against {kept} kept"
    );
}

/// Moves consumer group `group` of `queue` to the end of every partition.
pub fn seek_to_end(c: &mut Client, queue: &str, group: &str) {
    c.query_one(
        "SELECT queen.consumer_group_seek_queue($1, $2, '{\"toEnd\": true}')",
        &[&group, &queue],
    )
    .unwrap();
}

/// Pushes one message to each partition of `queue` named `prefix` and a
/// number below `n` (its payload that number), 1 000 a call.
pub fn fill_partitions(c: &mut Client, queue: &str, prefix: &str, n: usize) {
    for chunk in (0..n).collect::<Vec<_>>().chunks(1_000) {
        let items: Vec<Value> = chunk
            .iter()
            .map(|p| serde_json::json!({"queue": queue, "partition": format!("{prefix}{p}"), "payload": p}))
            .collect();
        push(c, &Value::Array(items));
    }
}

/// Push items of `n` messages of about 250 bytes each for `queue`.
pub fn notes(queue: &str, n: usize) -> Value {
    (0..n)
        .map(|i| serde_json::json!({"queue": queue, "payload": {"orderId": i, "note": "x".repeat(200)}}))
        .collect()
}
