//! The front-end's cost, measured side by side in one run: push and pop+ack
//! messages per second through HTTP vs the same work through SQL directly
//! (batch 100, as many connections as cores), and what 1000 idle long-poll
//! waiters cost the database (transactions per second, against none).
//!
//! Usage: queen_bench_http <dsn> <front-end url>

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};
use serde_json::{json, Value};

const BATCH: usize = 100;
const SECS: f64 = 5.0;

fn items(queue: &str, k: usize, n: u64) -> Value {
    Value::Array(
        (0..BATCH)
            .map(|i| json!({"queue": queue, "partition": format!("p{}", (k + i) % 16),
                            "payload": {"orderId": format!("{:016x}", n * 1000 + i as u64), "customer": {"id": i, "name": "Ada Lovelace"},
                                        "total": 12.5 + i as f64, "currency": "EUR", "status": "paid", "note": "alpha bravo"}}))
            .collect(),
    )
}

fn run(conns: usize, work: impl Fn(usize, &AtomicBool) -> u64 + Send + Sync + 'static) -> f64 {
    let work = Arc::new(work);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let handles: Vec<_> = (0..conns)
        .map(|k| {
            let (work, stop) = (Arc::clone(&work), Arc::clone(&stop));
            thread::spawn(move || work(k, &stop))
        })
        .collect();
    thread::sleep(Duration::from_secs_f64(SECS));
    stop.store(true, Ordering::Relaxed);
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    total as f64 / start.elapsed().as_secs_f64()
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
    let conns = thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build();

    let sql_push = {
        let dsn = dsn.clone();
        run(conns, move |k, stop| {
            let mut c = Client::connect(&dsn, NoTls).unwrap();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                c.execute("SELECT queen.push($1::jsonb)", &[&items("sql", k, n)]).unwrap();
                n += 1;
            }
            n * BATCH as u64
        })
    };
    let http_push = {
        let (agent, url) = (agent.clone(), url.clone());
        run(conns, move |k, stop| {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                agent.post(&format!("{url}/api/v1/push")).send_json(json!({"items": items("http", k, n)})).unwrap();
                n += 1;
            }
            n * BATCH as u64
        })
    };
    println!("push batch {BATCH}: SQL {sql_push:.0} msg/s, HTTP {http_push:.0} msg/s; HTTP/SQL {:.2} (target >= 0.7)", http_push / sql_push);

    let sql_pop = {
        let dsn = dsn.clone();
        run(conns, move |_, stop| {
            let mut c = Client::connect(&dsn, NoTls).unwrap();
            let mut got = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let popped: Value = c.query_one("SELECT queen.pop('sql', NULL, NULL, 100, '{}')", &[]).unwrap().get(0);
                let acks = acks_of(&popped);
                let n = acks.as_array().unwrap().len() as u64;
                if n == 0 {
                    break;
                }
                c.execute("SELECT queen.ack($1::jsonb)", &[&acks]).unwrap();
                got += n;
            }
            got
        })
    };
    let http_pop = {
        let (agent, url) = (agent.clone(), url.clone());
        run(conns, move |_, stop| {
            let mut got = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let resp = agent.get(&format!("{url}/api/v1/pop/queue/http?batch=100")).call().unwrap();
                if resp.status() == 204 {
                    break;
                }
                let popped: Value = resp.into_json().unwrap();
                let acks = acks_of(&popped);
                got += acks.as_array().unwrap().len() as u64;
                agent.post(&format!("{url}/api/v1/ack/batch")).send_json(json!({"acknowledgments": acks})).unwrap();
            }
            got
        })
    };
    println!("pop+ack batch {BATCH}: SQL {sql_pop:.0} msg/s, HTTP {http_pop:.0} msg/s; HTTP/SQL {:.2} (target >= 0.7)", http_pop / sql_pop);

    // Idle long polls: database transactions per second with 1000 waiters
    // on one empty queue, against the same window with none.
    let mut c = Client::connect(&dsn, NoTls).unwrap();
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
                        let _ = agent.get(&format!("{url}/api/v1/pop/queue/idle-waiters?wait=true&timeout=20000")).call();
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
