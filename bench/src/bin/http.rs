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
use std::time::Duration;

use postgres::types::Json;
use queen_bench::cluster::transactions;
use queen_bench::connect::{connect, Conn};
use queen_bench::payload::{plain_order, push_item, Popped};
use queen_bench::rounds::{self, interleave, Cell};
use serde_json::{json, Value};

const BATCH: usize = 100;
/// Seconds each figure is measured for, split over [`rounds::ROUNDS`]
/// rounds in which SQL and HTTP take turns (in alternating order), so a
/// change in the machine's load falls on both alike.
const SECS: f64 = 10.0;
/// Messages queued for each consumer before the pop+ack rounds: more than
/// either can take in `SECS`, so neither runs dry (the bench says when one
/// does).
const BACKLOG: u64 = 5_000_000;

/// A push array of `BATCH` plain orders for `queue` (call `n`, spread over
/// 16 partitions from the `k`th on).
fn items(queue: &str, k: usize, n: u64) -> Value {
    Value::Array(
        (0..BATCH)
            .map(|i| {
                let partition = format!("p{}", (k + i) % 16);
                push_item(queue, Some(&partition), plain_order(n * 1000 + i as u64, i))
            })
            .collect(),
    )
}

/// Messages per second of the SQL and the HTTP work, in interleaved rounds,
/// each on `conns` threads with a worker `sql` or `http` makes for each.
fn side_by_side<S, H>(
    conns: usize,
    sql: impl Fn(usize) -> S,
    http: impl Fn(usize) -> H,
) -> (f64, f64)
where
    S: FnMut() -> u64 + Send,
    H: FnMut() -> u64 + Send,
{
    let cells: [Cell<'_>; 2] = [
        Box::new(|secs| rounds::run((0..conns).map(&sql).collect(), secs)),
        Box::new(|secs| rounds::run((0..conns).map(&http).collect(), secs)),
    ];
    let rates = interleave(SECS, &cells);
    (rates[0], rates[1])
}

/// Posts the JSON `body` to `url` and reads the answer whole, as a client
/// reads it (each message's id and status); the agent keeps a connection
/// only once its answer is read, so a client that drops it reconnects for
/// every call.
fn post_json(agent: &ureq::Agent, url: &str, body: &str) {
    let answer = agent
        .post(url)
        .set("Content-Type", "application/json")
        .send_string(body)
        .unwrap();
    std::hint::black_box(answer.into_string().unwrap());
}

/// Prints one figure of the front-end's cost: SQL's and HTTP's rates for
/// `what` and their ratio.
fn print_cost(what: &str, sql: f64, http: f64) {
    println!(
        "{what} batch {BATCH}: SQL {sql:.0} msg/s, HTTP {http:.0} msg/s; \
         HTTP/SQL {:.2} (target >= 0.7)",
        http / sql
    );
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
    let (dsn, url, agent_ref, call) = (dsn.as_str(), url.as_str(), &agent, &call);

    // Both push the same JSON body text: SQL through queen.push_text, HTTP
    // through the front-end's push route, which passes it on as text. Each
    // SQL worker connects when it first runs and prepares its statements
    // once, as the front-end's statement cache does.
    let sql_push = |k: usize| {
        let mut c: Option<Conn> = None;
        move || {
            let c = c.get_or_insert_with(|| Conn::new(dsn));
            let body = items("push_sql", k, call.fetch_add(1, Ordering::Relaxed)).to_string();
            c.execute("SELECT queen.push_text($1)", &[&body]);
            BATCH as u64
        }
    };
    let http_push = |k: usize| {
        move || {
            let body =
                json!({"items": items("push_http", k, call.fetch_add(1, Ordering::Relaxed))})
                    .to_string();
            post_json(agent_ref, &format!("{url}/api/v1/push"), &body);
            BATCH as u64
        }
    };
    // QUEEN_BENCH_ONLY=pop runs the pop+ack figure alone, on a backlog of
    // QUEEN_BENCH_BACKLOG messages a side (default BACKLOG).
    let only_pop = std::env::var("QUEEN_BENCH_ONLY").as_deref() == Ok("pop");
    let backlog: u64 = std::env::var("QUEEN_BENCH_BACKLOG")
        .ok()
        .map_or(BACKLOG, |b| b.parse().expect("QUEEN_BENCH_BACKLOG"));
    if !only_pop {
        let (sql, http) = side_by_side(conns, sql_push, http_push);
        print_cost("push", sql, http);
    }

    // The same backlog for each consumer, queued before the clock starts.
    // One connection per consumer's queue, side by side.
    thread::scope(|s| {
        for queue in ["pop_sql", "pop_http"] {
            s.spawn(move || {
                let mut c = connect(dsn);
                for n in 0..backlog / BATCH as u64 {
                    c.execute(
                        "SELECT queen.push_text($1)",
                        &[&items(queue, n as usize, n).to_string()],
                    )
                    .unwrap();
                }
            });
        }
    });
    let mut c = connect(dsn);
    c.batch_execute("VACUUM ANALYZE queen.log_segments, queen.log_txns, queen.log_partitions")
        .unwrap();
    let sql_pop = |_: usize| {
        let mut c: Option<Conn> = None;
        move || {
            let c = c.get_or_insert_with(|| Conn::new(dsn));
            let row = c.query_one("SELECT queen.pop('pop_sql', NULL, NULL, 100, '{}')", &[]);
            let Json(popped): Json<Popped> = row.get(0);
            let n = popped.messages.len() as u64;
            if n == 0 {
                return 0;
            }
            c.execute("SELECT queen.ack_text($1)", &[&popped.acks()]);
            n
        }
    };
    let http_pop = |_: usize| {
        move || {
            let resp = agent_ref
                .get(&format!("{url}/api/v1/pop/queue/pop_http?batch=100"))
                .call()
                .unwrap();
            if resp.status() == 204 {
                return 0;
            }
            // The whole body first, then parsed (reading JSON straight off the
            // socket goes a byte at a time).
            let text = resp.into_string().unwrap();
            let popped: Popped = serde_json::from_str(&text).unwrap();
            let body = format!("{{\"acknowledgments\":{}}}", popped.acks());
            post_json(agent_ref, &format!("{url}/api/v1/ack/batch"), &body);
            popped.messages.len() as u64
        }
    };
    let (sql, http) = side_by_side(conns, sql_pop, http_pop);
    print_cost("pop+ack", sql, http);
    for (side, rate) in [("SQL", sql), ("HTTP", http)] {
        if rate * SECS >= 0.99 * backlog as f64 {
            println!("  the {side} backlog ran dry: its figure is a lower bound");
        }
    }
    if only_pop {
        return;
    }

    // Idle long polls: database transactions per second with 1000 waiters
    // on one empty queue, against the same window with none.
    let before = transactions(&mut c);
    thread::sleep(Duration::from_secs(5));
    let quiet = (transactions(&mut c) - before) as f64 / 5.0;
    let stop = Arc::new(AtomicBool::new(false));
    let waiters: Vec<_> = (0..1000)
        .map(|_| {
            let (agent, url, stop) = (agent.clone(), url.to_owned(), Arc::clone(&stop));
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
    let before = transactions(&mut c);
    thread::sleep(Duration::from_secs(10));
    let busy = (transactions(&mut c) - before) as f64 / 10.0;
    stop.store(true, Ordering::Relaxed);
    println!(
        "1000 idle long-poll waiters: {busy:.1} database transactions/s \
         (without them: {quiet:.1}/s)"
    );
    drop(waiters);
    std::process::exit(0);
}
