//! A snapshot held open elsewhere in the database against the message path:
//! one producer pushing 10 messages a call (to 16 partitions in turn) and
//! one consumer popping 100 and acking them, for queen over SQL, queen over
//! HTTP and pgmq (whose read sets a visibility timeout with an UPDATE),
//! measured side by side in one run: each window is split into three
//! equal slices, one per contender, in turn. Three phases: quiet, then a
//! REPEATABLE READ transaction held open in another session (its snapshot
//! is the database's horizon, as a pg_dump's or a long analytics query's
//! is), then released. Prints each contender's rates per window and,
//! after each phase, the dead tuples of every queen table and pgmq's.
//!
//! With `QUEEN_XMIN_PATHS=side`, the same phases load the paths beside the
//! log instead: an ephemeral queue (push of 10, pop of 100 + ack, over
//! SQL), KV increments of 16 hot keys (and reads of them), and timers due
//! at once (scheduled one a call, counted as they fire into their queue).
//!
//! Usage: queen_bench_xmin <dsn> <front-end url>
//!   QUEEN_XMIN_QUIET_S (default 60), QUEEN_XMIN_HELD_S (600),
//!   QUEEN_XMIN_RELEASED_S (60), QUEEN_XMIN_WINDOW_S (30),
//!   QUEEN_XMIN_PATHS (log, the default, or side)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use postgres::types::Json;
use postgres::Client;
use queen_bench::connect::{connect, Conn};
use queen_bench::payload::{plain_order, push_item, Popped};
use serde_json::Value;

const PARTITIONS: u64 = 16;
const PUSH_BATCH: u64 = 10;
const POP_BATCH: i32 = 100;
const SQL_QUEUE: &str = "xmin_sql";
const HTTP_QUEUE: &str = "xmin_http";
const PGMQ_QUEUE: &str = "xmin_pgmq";
const EPHEMERAL_QUEUE: &str = "xmin_ephemeral";
const TIMER_QUEUE: &str = "xmin_timers";
const KV_NAMESPACE: &str = "xmin";

#[derive(Clone, Copy, PartialEq)]
enum Contender {
    Sql,
    Http,
    Pgmq,
    Ephemeral,
    Kv,
    Timers,
}

/// The contenders of a run: the log's paths and pgmq, or the side paths.
fn contenders() -> &'static [Contender] {
    match std::env::var("QUEEN_XMIN_PATHS").as_deref() {
        Ok("side") => &[Contender::Ephemeral, Contender::Kv, Contender::Timers],
        Ok("log") | Err(_) => &[Contender::Sql, Contender::Http, Contender::Pgmq],
        Ok(other) => panic!("QUEEN_XMIN_PATHS={other}: log or side"),
    }
}

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Sql => "queen SQL",
            Contender::Http => "queen HTTP",
            Contender::Pgmq => "pgmq",
            Contender::Ephemeral => "ephemeral",
            Contender::Kv => "KV incr/get",
            Contender::Timers => "timers",
        }
    }
}

fn seconds(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{var}")))
}

/// Call `n`'s push array for `queue`: 10 orders, all to one partition, the
/// partitions taken in turn.
fn items(queue: &str, n: u64) -> Value {
    let partition = format!("p{}", n % PARTITIONS);
    Value::Array(
        (0..PUSH_BATCH)
            .map(|i| {
                push_item(
                    queue,
                    Some(&partition),
                    plain_order(n * 100 + i, i as usize),
                )
            })
            .collect(),
    )
}

/// One producer and one consumer of `who` for `secs`; answers the messages
/// pushed and the messages consumed.
fn slice(who: Contender, dsn: &str, url: &str, secs: f64, calls: &AtomicU64) -> (u64, u64) {
    let stop = AtomicBool::new(false);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build();
    thread::scope(|s| {
        let producer = s.spawn(|| {
            let mut c = Conn::new(dsn);
            let mut pushed = 0;
            while Instant::now() < deadline {
                let n = calls.fetch_add(1, Ordering::Relaxed);
                match who {
                    Contender::Sql => {
                        c.execute(
                            "SELECT queen.push_text($1)",
                            &[&items(SQL_QUEUE, n).to_string()],
                        );
                    }
                    Contender::Http => {
                        let body = serde_json::json!({"items": items(HTTP_QUEUE, n)}).to_string();
                        let answer = agent
                            .post(&format!("{url}/api/v1/push"))
                            .set("Content-Type", "application/json")
                            .send_string(&body)
                            .unwrap();
                        std::hint::black_box(answer.into_string().unwrap());
                    }
                    Contender::Pgmq => {
                        let msgs: Vec<String> = (0..PUSH_BATCH)
                            .map(|i| plain_order(n * 100 + i, i as usize).to_string())
                            .collect();
                        c.execute(
                            "SELECT pgmq.send_batch($1, $2::text[]::jsonb[])",
                            &[&PGMQ_QUEUE, &msgs],
                        );
                    }
                    Contender::Ephemeral => {
                        let body = serde_json::json!({
                            "queue": EPHEMERAL_QUEUE,
                            "partition": format!("p{}", n % PARTITIONS),
                            "messages": (0..PUSH_BATCH)
                                .map(|i| serde_json::json!({"payload": plain_order(n * 100 + i, i as usize)}))
                                .collect::<Vec<_>>(),
                        });
                        c.execute("SELECT queen.ephemeral_push($1::text::jsonb)", &[&body.to_string()]);
                    }
                    Contender::Kv => {
                        c.execute(
                            "SELECT queen.kv_incr($1, $2, forever => true)",
                            &[&KV_NAMESPACE, &format!("k{}", n % PARTITIONS)],
                        );
                        pushed += 1;
                        continue;
                    }
                    Contender::Timers => {
                        c.execute(
                            "SELECT queen.timer_schedule($1, $2, '{}', 0)",
                            &[&TIMER_QUEUE, &format!("t{n}")],
                        );
                        pushed += 1;
                        continue;
                    }
                }
                pushed += PUSH_BATCH;
            }
            stop.store(true, Ordering::Relaxed);
            pushed
        });
        let consumer = s.spawn(|| {
            let mut c = Conn::new(dsn);
            let mut consumed = 0;
            while Instant::now() < deadline {
                let got = match who {
                    Contender::Sql => {
                        let row = c.query_one(
                            "SELECT queen.pop($1, NULL, NULL, $2, '{}')",
                            &[&SQL_QUEUE, &POP_BATCH],
                        );
                        let Json(popped): Json<Popped> = row.get(0);
                        let n = popped.messages.len() as u64;
                        if n > 0 {
                            c.execute("SELECT queen.ack_text($1)", &[&popped.acks()]);
                        }
                        n
                    }
                    Contender::Http => {
                        let resp = agent
                            .get(&format!(
                                "{url}/api/v1/pop/queue/{HTTP_QUEUE}?batch={POP_BATCH}"
                            ))
                            .call()
                            .unwrap();
                        if resp.status() == 204 {
                            0
                        } else {
                            let text = resp.into_string().unwrap();
                            let popped: Popped = serde_json::from_str(&text).unwrap();
                            let body = format!("{{\"acknowledgments\":{}}}", popped.acks());
                            let answer = agent
                                .post(&format!("{url}/api/v1/ack/batch"))
                                .set("Content-Type", "application/json")
                                .send_string(&body)
                                .unwrap();
                            std::hint::black_box(answer.into_string().unwrap());
                            popped.messages.len() as u64
                        }
                    }
                    Contender::Ephemeral => {
                        let row = c.query_one(
                            "SELECT queen.ephemeral_pop($1, NULL, NULL, $2)::text",
                            &[&EPHEMERAL_QUEUE, &(POP_BATCH as i64)],
                        );
                        let popped: Value = serde_json::from_str(row.get::<_, &str>(0)).unwrap();
                        let acks: Vec<Value> = popped["messages"]
                            .as_array()
                            .map(|m| {
                                m.iter()
                                    .map(|m| serde_json::json!({"id": m["id"]}))
                                    .collect()
                            })
                            .unwrap_or_default();
                        if !acks.is_empty() {
                            let body = serde_json::json!({"queue": EPHEMERAL_QUEUE, "acks": acks});
                            c.execute(
                                "SELECT queen.ephemeral_ack($1::text::jsonb)",
                                &[&body.to_string()],
                            );
                        }
                        acks.len() as u64
                    }
                    Contender::Kv => {
                        let n = calls.fetch_add(1, Ordering::Relaxed);
                        c.query_one(
                            "SELECT queen.kv_get($1, $2)::text",
                            &[&KV_NAMESPACE, &format!("k{}", n % PARTITIONS)],
                        );
                        1
                    }
                    Contender::Timers => {
                        let row = c.query_one(
                            "SELECT queen.pop($1, NULL, NULL, $2, '{\"autoAck\": true}')",
                            &[&TIMER_QUEUE, &POP_BATCH],
                        );
                        let Json(popped): Json<Popped> = row.get(0);
                        popped.messages.len() as u64
                    }
                    Contender::Pgmq => {
                        let rows = c.query(
                            "SELECT msg_id, message FROM pgmq.read($1, 30, $2)",
                            &[&PGMQ_QUEUE, &POP_BATCH],
                        );
                        let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
                        if !ids.is_empty() {
                            c.execute("SELECT pgmq.delete($1, $2::bigint[])", &[&PGMQ_QUEUE, &ids]);
                        }
                        ids.len() as u64
                    }
                };
                consumed += got;
                if got == 0 && !stop.load(Ordering::Relaxed) {
                    thread::sleep(Duration::from_millis(1));
                }
            }
            consumed
        });
        (producer.join().unwrap(), consumer.join().unwrap())
    })
}

/// The dead tuples of every table of schema queen with any, and of pgmq's
/// queue table, as one line each.
fn dead_tuples(c: &mut Client, phase: &str) {
    // The statistics a backend reports reach the views within a second.
    thread::sleep(Duration::from_millis(1500));
    println!("dead tuples after {phase}:");
    for row in c
        .query(
            "SELECT schemaname || '.' || relname, n_dead_tup, n_live_tup FROM pg_stat_user_tables
              WHERE (schemaname = 'queen' AND n_dead_tup + n_live_tup > 0)
                 OR (schemaname = 'pgmq' AND relname = 'q_' || $1)
              ORDER BY 1",
            &[&PGMQ_QUEUE],
        )
        .unwrap()
    {
        let (name, dead, live): (String, i64, i64) = (row.get(0), row.get(1), row.get(2));
        println!("  {name:<32} dead {dead:>9}  live {live:>9}");
    }
}

struct Window {
    phase: &'static str,
    rates: Vec<(f64, f64)>,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dsn = args
        .next()
        .unwrap_or_else(|| queen_bench::connect::DEFAULT_DSN.into());
    let url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:6636".into());
    let window = seconds("QUEEN_XMIN_WINDOW_S", 30) as f64;
    let phases = [
        ("quiet", seconds("QUEEN_XMIN_QUIET_S", 60)),
        ("held", seconds("QUEEN_XMIN_HELD_S", 600)),
        ("released", seconds("QUEEN_XMIN_RELEASED_S", 60)),
    ];
    let mut c = connect(&dsn);
    install_pgmq(&dsn, &mut c);
    let calls = AtomicU64::new(0);
    let mut holder: Option<Client> = None;
    let mut windows: Vec<Window> = Vec::new();
    let who_all = contenders();
    println!(
        "xmin: one producer and one consumer per contender, {PARTITIONS} partitions or keys, \
         {window} s windows split {} ways; rates per second, produced / consumed",
        who_all.len()
    );
    print!("{:<9} {:>6}", "phase", "t (s)");
    for who in who_all {
        print!("  {:>22}", who.name());
    }
    println!();
    let started = Instant::now();
    for (phase, secs) in phases {
        match phase {
            "held" => {
                let mut h = connect(&dsn);
                h.batch_execute(
                    "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class",
                )
                .unwrap();
                holder = Some(h);
            }
            "released" => {
                if let Some(mut h) = holder.take() {
                    h.batch_execute("COMMIT").unwrap();
                }
            }
            _ => {}
        }
        let count = (secs as f64 / window).ceil().max(1.0) as usize;
        for _ in 0..count {
            let mut rates = Vec::new();
            for &who in who_all {
                let part = window / who_all.len() as f64;
                let (pushed, consumed) = slice(who, &dsn, &url, part, &calls);
                rates.push((pushed as f64 / part, consumed as f64 / part));
            }
            print!("{phase:<9} {:>6.0}", started.elapsed().as_secs_f64());
            for (p, c) in &rates {
                print!("  {p:>10.0} / {c:>9.0}");
            }
            println!();
            windows.push(Window { phase, rates });
        }
        dead_tuples(&mut c, phase);
    }
    summary(&windows);
}

/// Each contender's push + consume rate, and its consume rate alone, in
/// the last held window and the first released one, against its quiet
/// mean.
fn summary(windows: &[Window]) {
    let total = |w: &Window, k: usize| w.rates[k].0 + w.rates[k].1;
    let consumed = |w: &Window, k: usize| w.rates[k].1;
    println!("\nagainst the quiet mean (push + consume; consume alone):");
    for (k, who) in contenders().iter().enumerate() {
        let ratios = |rate: &dyn Fn(&Window, usize) -> f64| {
            let quiet: Vec<f64> = windows
                .iter()
                .filter(|w| w.phase == "quiet")
                .map(|w| rate(w, k))
                .collect();
            let mean = quiet.iter().sum::<f64>() / quiet.len().max(1) as f64;
            let last_held = windows.iter().rev().find(|w| w.phase == "held");
            let first_released = windows.iter().find(|w| w.phase == "released");
            (
                mean,
                last_held.map_or(f64::NAN, |w| rate(w, k) / mean),
                first_released.map_or(f64::NAN, |w| rate(w, k) / mean),
            )
        };
        let (mean, held, released) = ratios(&total);
        let (c_mean, c_held, c_released) = ratios(&consumed);
        println!(
            "  {:<10}  quiet {mean:>8.0} msgs/s   held, last window {held:>5.2}x   released, first window {released:>5.2}x",
            who.name()
        );
        println!(
            "  {:<10}  consume alone {c_mean:>8.0} msgs/s   held {c_held:>5.2}x   released {c_released:>5.2}x",
            ""
        );
    }
    println!("targets: queen at the end of the held phase >= 0.8x, released >= 0.95x");
}

/// pgmq installed in the same database, its queue made afresh.
fn install_pgmq(dsn: &str, c: &mut Client) {
    let installed: bool = c
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'pgmq')",
            &[],
        )
        .unwrap()
        .get(0);
    if !installed {
        queen_bench::cluster::install_pgmq(dsn);
    }
    let _ = c.execute("SELECT pgmq.drop_queue($1)", &[&PGMQ_QUEUE]);
    c.execute("SELECT pgmq.create($1)", &[&PGMQ_QUEUE]).unwrap();
}
