//! The front-end's cost, measured side by side in one run: push and pop+ack
//! messages per second through HTTP vs the same work through SQL directly
//! (batch 100, as many connections as cores, in interleaved rounds; the
//! pop+ack from equal backlogs queued beforehand), and what 1000 idle
//! long-poll waiters cost the database (transactions per second, against
//! none).
//!
//! Usage: queen_bench_http <dsn> <front-end url>

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};
use serde_json::{json, Value};

const BATCH: usize = 100;
/// Seconds each figure is measured for, split over `ROUNDS` rounds in which
/// SQL and HTTP take turns (in alternating order), so a change in the
/// machine's load falls on both alike.
const SECS: f64 = 10.0;
const ROUNDS: usize = 5;
/// Messages queued for each consumer before the pop+ack rounds: more than
/// either can take in `SECS`, so neither runs dry (the bench says when one
/// does).
const BACKLOG: u64 = 1_500_000;

fn items(queue: &str, k: usize, n: u64) -> Value {
    Value::Array(
        (0..BATCH)
            .map(|i| json!({"queue": queue, "partition": format!("p{}", (k + i) % 16),
                            "payload": {"orderId": format!("{:016x}", n * 1000 + i as u64), "customer": {"id": i, "name": "Ada Lovelace"},
                                        "total": 12.5 + i as f64, "currency": "EUR", "status": "paid", "note": "alpha bravo"}}))
            .collect(),
    )
}

/// Runs `work` on `conns` threads for `secs`; answers the messages handled
/// and the seconds taken.
fn run(conns: usize, secs: f64, work: &(dyn Fn(usize, &AtomicBool) -> u64 + Sync)) -> (u64, f64) {
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let total = thread::scope(|scope| {
        let handles: Vec<_> = (0..conns)
            .map(|k| {
                scope.spawn({
                    let stop = &stop;
                    move || work(k, stop)
                })
            })
            .collect();
        thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
    });
    (total, start.elapsed().as_secs_f64())
}

/// Messages per second of the SQL and the HTTP work, in interleaved rounds.
fn side_by_side(
    conns: usize,
    sql: &(dyn Fn(usize, &AtomicBool) -> u64 + Sync),
    http: &(dyn Fn(usize, &AtomicBool) -> u64 + Sync),
) -> (f64, f64) {
    let slice = SECS / ROUNDS as f64;
    let (mut s, mut h) = ((0u64, 0f64), (0u64, 0f64));
    for round in 0..ROUNDS {
        let mut turn = |first_sql: bool| {
            let (m, t) = run(conns, slice, if first_sql { sql } else { http });
            let acc = if first_sql { &mut s } else { &mut h };
            acc.0 += m;
            acc.1 += t;
        };
        turn(round % 2 == 0);
        turn(round % 2 == 1);
    }
    (s.0 as f64 / s.1, h.0 as f64 / h.1)
}

fn acks_of(popped: &Value) -> Value {
    Value::Array(
        popped["messages"]
            .as_array()
            .map(|m| m.iter().map(|m| json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"]})).collect())
            .unwrap_or_default(),
    )
}

fn commits(c: &mut Client) -> i64 {
    c.query_one("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()", &[])
        .unwrap()
        .get(0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dsn = args.next().expect("dsn");
    let url = args.next().expect("front-end url");
    let conns = thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    // Every connection is kept between calls, as each client's own would be
    // (the agent keeps one idle connection per host unless told otherwise,
    // and closing the others made every call but one reconnect).
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .max_idle_connections(2000)
        .max_idle_connections_per_host(2000)
        .build();
    let call = AtomicU64::new(0);

    // Both push the same JSON body text: SQL through queen.push_text, HTTP
    // through the front-end's push route, which passes it on as text.
    let sql_push = |k: usize, stop: &AtomicBool| {
        let mut c = Client::connect(&dsn, NoTls).unwrap();
        // Prepared once, as the front-end's statement cache does.
        let push = c.prepare("SELECT queen.push_text($1)").unwrap();
        let mut sent = 0;
        while !stop.load(Ordering::Relaxed) {
            let body = items("push_sql", k, call.fetch_add(1, Ordering::Relaxed)).to_string();
            c.execute(&push, &[&body]).unwrap();
            sent += BATCH as u64;
        }
        sent
    };
    let http_push = |k: usize, stop: &AtomicBool| {
        let mut sent = 0;
        while !stop.load(Ordering::Relaxed) {
            let body =
                json!({"items": items("push_http", k, call.fetch_add(1, Ordering::Relaxed))})
                    .to_string();
            // The answer read whole, as a client reads it (each message's id
            // and status); the agent keeps a connection only once its answer
            // is read, so a client that drops it reconnects for every call.
            let answer = agent
                .post(&format!("{url}/api/v1/push"))
                .set("Content-Type", "application/json")
                .send_string(&body)
                .unwrap();
            std::hint::black_box(answer.into_string().unwrap());
            sent += BATCH as u64;
        }
        sent
    };
    let (sql, http) = side_by_side(conns, &sql_push, &http_push);
    println!("push batch {BATCH}: SQL {sql:.0} msg/s, HTTP {http:.0} msg/s; HTTP/SQL {:.2} (target >= 0.7)", http / sql);

    // The same backlog for each consumer, queued before the clock starts.
    let mut c = Client::connect(&dsn, NoTls).unwrap();
    for queue in ["pop_sql", "pop_http"] {
        for n in 0..BACKLOG / BATCH as u64 {
            c.execute(
                "SELECT queen.push_text($1)",
                &[&items(queue, n as usize, n).to_string()],
            )
            .unwrap();
        }
    }
    c.batch_execute("VACUUM ANALYZE queen.log_segments, queen.log_txns, queen.log_partitions")
        .unwrap();
    let sql_pop = |_: usize, stop: &AtomicBool| {
        let mut c = Client::connect(&dsn, NoTls).unwrap();
        let pop = c
            .prepare("SELECT queen.pop('pop_sql', NULL, NULL, 100, '{}')")
            .unwrap();
        let ack = c.prepare("SELECT queen.ack_text($1)").unwrap();
        let mut got = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let popped: Value = c.query_one(&pop, &[]).unwrap().get(0);
            let acks = acks_of(&popped);
            let n = acks.as_array().unwrap().len() as u64;
            if n == 0 {
                thread::sleep(Duration::from_millis(1));
                continue;
            }
            c.execute(&ack, &[&acks.to_string()]).unwrap();
            got += n;
        }
        got
    };
    let http_pop = |_: usize, stop: &AtomicBool| {
        let mut got = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let resp = agent
                .get(&format!("{url}/api/v1/pop/queue/pop_http?batch=100"))
                .call()
                .unwrap();
            if resp.status() == 204 {
                thread::sleep(Duration::from_millis(1));
                continue;
            }
            // The whole body first, then parsed (reading JSON straight off the
            // socket goes a byte at a time).
            let popped: Value = serde_json::from_str(&resp.into_string().unwrap()).unwrap();
            let acks = acks_of(&popped);
            got += acks.as_array().unwrap().len() as u64;
            let body = json!({"acknowledgments": acks}).to_string();
            let answer = agent
                .post(&format!("{url}/api/v1/ack/batch"))
                .set("Content-Type", "application/json")
                .send_string(&body)
                .unwrap();
            std::hint::black_box(answer.into_string().unwrap());
        }
        got
    };
    let (sql, http) = side_by_side(conns, &sql_pop, &http_pop);
    println!("pop+ack batch {BATCH}: SQL {sql:.0} msg/s, HTTP {http:.0} msg/s; HTTP/SQL {:.2} (target >= 0.7)", http / sql);
    for (side, rate) in [("SQL", sql), ("HTTP", http)] {
        if rate * SECS >= 0.99 * BACKLOG as f64 {
            println!("  the {side} backlog ran dry: its figure is a lower bound");
        }
    }

    // Idle long polls: database transactions per second with 1000 waiters
    // on one empty queue, against the same window with none.
    let before = commits(&mut c);
    thread::sleep(Duration::from_secs(5));
    let quiet = (commits(&mut c) - before) as f64 / 5.0;
    let stop = Arc::new(AtomicBool::new(false));
    let waiters: Vec<_> = (0..1000)
        .map(|_| {
            let (agent, url, stop) = (agent.clone(), url.clone(), Arc::clone(&stop));
            thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let _ = agent
                            .get(&format!(
                                "{url}/api/v1/pop/queue/idle-waiters?wait=true&timeout=20000"
                            ))
                            .call();
                    }
                })
                .unwrap()
        })
        .collect();
    thread::sleep(Duration::from_secs(3));
    let before = commits(&mut c);
    thread::sleep(Duration::from_secs(10));
    let busy = (commits(&mut c) - before) as f64 / 10.0;
    stop.store(true, Ordering::Relaxed);
    println!("1000 idle long-poll waiters: {busy:.1} database transactions/s (without them: {quiet:.1}/s)");
    drop(waiters);
    std::process::exit(0);
}
