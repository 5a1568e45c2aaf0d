//! Request fusion, measured side by side in one run with `wrk`: two
//! front-ends over one database, one fusing (the defaults) and one with
//! `QUEEN_FUSION=off`, take turns in interleaved rounds.
//!
//! - push of 1 and of 10 messages (about 256 B each, 16 partitions) per
//!   request from 64 and from 256 connections, fused vs off, and 100 per
//!   request from 16 connections;
//! - single acks (one message each, of leases taken beforehand) from 64
//!   connections, fused vs off;
//! - p50/p99 of a push of 1 from one connection (one request at a time),
//!   fused vs off, the median of the rounds;
//! - the requests per second the front-end answers on a route that touches
//!   no database (its HTTP ceiling on this machine);
//! - the engine alone: the push lane's call (`queen.push_fused`) from one
//!   connection with no HTTP, calls one after another, of 32 and of 64
//!   single-message requests over the 16 partitions: what 64 connections
//!   of push 1 could reach if HTTP cost nothing.
//!
//! Usage: queen_bench_fusion <dsn> <fused url> <unfused url> <work dir>

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use queen_bench::connect::connect;
use queen_bench::payload::{plain_order, push_item};
use queen_bench::rounds::{interleave, Cell, ROUNDS};
use serde_json::{json, Value};

/// Seconds each comparison is measured for, split over the rounds.
const SECS: f64 = 10.0;
/// Rounds of the low-load latency cell: more and shorter than the others,
/// so that its median round is not one a checkpoint happened to hit.
const LONE_ROUNDS: usize = 10;
/// wrk's threads: as many as the machine's cores.
const WRK_THREADS: usize = 2;
/// Partitions the pushes spread over.
const PARTITIONS: usize = 16;
/// Partitions of each ack queue: one lease each.
const ACK_PARTITIONS: usize = 64;
/// Messages leased per ack queue partition for each round.
const ACKS_PER_PARTITION_ROUND: usize = 1_500;

/// What one wrk run measured.
struct Wrk {
    requests: u64,
    secs: f64,
    refused: u64,
    p50_ms: f64,
    p99_ms: f64,
}

/// A duration as wrk prints it (`812.00us`, `1.23ms`, `2.00s`) in ms.
fn millis(text: &str) -> f64 {
    let (n, unit) = text
        .find(|c: char| c.is_ascii_alphabetic())
        .map(|i| text.split_at(i))
        .unwrap_or((text, "ms"));
    let n: f64 = n.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => f64::NAN,
    }
}

fn wrk(url: &str, script: &Path, conns: usize, secs: f64, args: &[String]) -> Wrk {
    let out = Command::new("wrk")
        .arg(format!("-t{}", WRK_THREADS.min(conns)))
        .arg(format!("-c{conns}"))
        .arg(format!("-d{}s", secs.round().max(1.0) as u64))
        .arg("--latency")
        .arg("-s")
        .arg(script)
        .arg(url)
        .arg("--")
        .args(args)
        .output()
        .expect("wrk (Debian's package wrk)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut w = Wrk {
        requests: 0,
        secs: secs.round().max(1.0),
        refused: 0,
        p50_ms: f64::NAN,
        p99_ms: f64::NAN,
    };
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [n, "requests", "in", took, ..] => {
                w.requests = n.parse().unwrap_or(0);
                w.secs = millis(took.trim_end_matches(',')) / 1000.0;
            }
            ["Non-2xx", "or", "3xx", "responses:", n] => w.refused = n.parse().unwrap_or(0),
            ["50%", t] => w.p50_ms = millis(t),
            ["99%", t] => w.p99_ms = millis(t),
            _ => {}
        }
    }
    if w.requests == 0 {
        eprintln!(
            "wrk measured nothing:\n{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    w
}

/// The median of `figures`.
fn median(mut figures: Vec<f64>) -> f64 {
    figures.sort_by(f64::total_cmp);
    figures[figures.len() / 2]
}

/// A Lua long string holding `text`.
fn lua_string(text: &str) -> String {
    assert!(!text.contains("]==]"));
    format!("[==[{text}]==]")
}

/// A wrk script posting the bodies in turn to `path`.
fn bodies_script(dir: &Path, name: &str, path: &str, bodies: &[String]) -> PathBuf {
    let list: Vec<String> = bodies.iter().map(|b| lua_string(b)).collect();
    let script = format!(
        "local bodies = {{ {} }}\nlocal i = 0\nwrk.method = \"POST\"\nwrk.path = \"{path}\"\n\
         wrk.headers[\"Content-Type\"] = \"application/json\"\n\
         request = function()\n  i = i + 1\n  return wrk.format(nil, nil, nil, bodies[(i % #bodies) + 1])\nend\n",
        list.join(",\n")
    );
    let file = dir.join(format!("{name}.lua"));
    std::fs::write(&file, script).unwrap();
    file
}

/// A wrk script posting the lines of the file given as its first argument,
/// thread `k` of `n` taking every `n`th line from the `k`th.
fn lines_script(dir: &Path, path: &str) -> PathBuf {
    let script = format!(
        "local threads = 0\nfunction setup(thread)\n  thread:set(\"id\", threads)\n  threads = threads + 1\nend\n\
         local bodies = {{}}\nlocal i = 0\n\
         function init(args)\n  local n = 0\n  for line in io.lines(args[1]) do\n\
             if n % {WRK_THREADS} == id then bodies[#bodies + 1] = line end\n    n = n + 1\n  end\nend\n\
         wrk.method = \"POST\"\nwrk.path = \"{path}\"\n\
         wrk.headers[\"Content-Type\"] = \"application/json\"\n\
         request = function()\n  i = i + 1\n  return wrk.format(nil, nil, nil, bodies[((i - 1) % #bodies) + 1])\nend\n"
    );
    let file = dir.join("acks.lua");
    std::fs::write(&file, script).unwrap();
    file
}

/// Push bodies of `per` messages for `queue`, one per partition.
fn push_bodies(queue: &str, per: usize) -> Vec<String> {
    (0..PARTITIONS)
        .map(|p| {
            let partition = format!("p{p}");
            Value::Array(
                (0..per)
                    .map(|i| {
                        push_item(
                            queue,
                            Some(&partition),
                            plain_order((p * per + i) as u64, i),
                        )
                    })
                    .collect(),
            )
            .to_string()
        })
        .collect()
}

/// Queues `rounds` files of single-ack bodies for `queue`: its messages
/// pushed and leased beforehand, one lease per partition per round; in
/// each file the partitions take turns, each in offset order.
fn ack_files(c: &mut postgres::Client, dir: &Path, queue: &str, rounds: usize) -> Vec<PathBuf> {
    c.execute(
        "SELECT queen.configure($1, '{\"leaseTime\": 3600}')",
        &[&queue],
    )
    .unwrap();
    let per = ACKS_PER_PARTITION_ROUND * rounds;
    for p in 0..ACK_PARTITIONS {
        let partition = format!("p{p}");
        for chunk in 0..per.div_ceil(1000) {
            let n = 1000.min(per - chunk * 1000);
            let items = Value::Array(
                (0..n)
                    .map(|i| push_item(queue, Some(&partition), plain_order(i as u64, i)))
                    .collect(),
            );
            c.execute("SELECT queen.push($1)", &[&items]).unwrap();
        }
    }
    (0..rounds)
        .map(|r| {
            let mut per_partition: Vec<Vec<String>> = Vec::new();
            for p in 0..ACK_PARTITIONS {
                let popped: Value = c
                    .query_one(
                        "SELECT queen.pop($1, $2, NULL, $3, '{}')",
                        &[&queue, &format!("p{p}"), &(ACKS_PER_PARTITION_ROUND as i32)],
                    )
                    .unwrap()
                    .get(0);
                per_partition.push(
                    popped["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| {
                            json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                                   "leaseId": m["leaseId"], "status": "completed"})
                            .to_string()
                        })
                        .collect(),
                );
            }
            let mut lines = String::new();
            for k in 0..ACKS_PER_PARTITION_ROUND {
                for part in &per_partition {
                    if let Some(b) = part.get(k) {
                        lines.push_str(b);
                        lines.push('\n');
                    }
                }
            }
            let file = dir.join(format!("{queue}-{r}.txt"));
            std::fs::write(&file, lines).unwrap();
            file
        })
        .collect()
}

/// Waits until the server is quiet: a checkpoint, the hot tables vacuumed,
/// and no autovacuum worker running (for at most a minute).
fn settle(c: &mut postgres::Client) {
    // Two statements: a VACUUM can not run in the implicit transaction of
    // a multi-statement query.
    c.batch_execute("CHECKPOINT").unwrap();
    // The cursors' table of this version (states) or of the one before.
    let cursors: String = c
        .query_one(
            "SELECT CASE WHEN to_regclass('queen.log_cursor_states') IS NULL
                         THEN 'queen.log_consumers' ELSE 'queen.log_cursor_states' END",
            &[],
        )
        .unwrap()
        .get(0);
    c.batch_execute(&format!("VACUUM queen.log_partitions, {cursors}"))
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let busy: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'",
                &[],
            )
            .unwrap()
            .get(0);
        if busy == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dsn = args.next().expect("dsn");
    let fused = args.next().expect("fused url");
    let off = args.next().expect("unfused url");
    let dir = PathBuf::from(args.next().expect("work dir"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = connect(&dsn);
    println!("request fusion: fused front-end vs QUEEN_FUSION=off, side by side ({ROUNDS} rounds)");

    // The HTTP ceiling: a route that touches no database.
    let ceiling_script = dir.join("ceiling.lua");
    std::fs::write(&ceiling_script, "wrk.path = \"/api/v1/no-such-route\"\n").unwrap();
    let ceiling = wrk(&fused, &ceiling_script, 64, SECS / 2.0, &[]);
    let ceiling_rps = ceiling.requests as f64 / ceiling.secs;
    println!("HTTP ceiling (no database, 64 connections): {ceiling_rps:.0} req/s");

    let push_cell = |url: &str, script: &Path, conns: usize, per: usize| -> (u64, f64) {
        let w = wrk(url, script, conns, SECS / ROUNDS as f64, &[]);
        if w.refused > 0 {
            eprintln!("{} of {} pushes refused", w.refused, w.requests);
        }
        (w.requests * per as u64, w.secs)
    };
    let mut one_by_64 = (0.0, 0.0);
    let mut ten_by_64 = 0.0;
    for per in [1usize, 10] {
        let fused_script = bodies_script(
            &dir,
            &format!("push{per}-fused"),
            "/api/v1/push",
            &push_bodies("fusion_fused", per),
        );
        let off_script = bodies_script(
            &dir,
            &format!("push{per}-off"),
            "/api/v1/push",
            &push_bodies("fusion_off", per),
        );
        for conns in [64usize, 256] {
            let cells: [Cell<'_>; 2] = [
                Box::new(|_| push_cell(&fused, &fused_script, conns, per)),
                Box::new(|_| push_cell(&off, &off_script, conns, per)),
            ];
            let rates = interleave(SECS, &cells);
            println!(
                "push {per} per request x {conns} connections: fused {:.0} msg/s ({:.0} req/s), \
                 off {:.0} msg/s; fused/off {:.2}",
                rates[0],
                rates[0] / per as f64,
                rates[1],
                rates[0] / rates[1]
            );
            if conns == 64 {
                if per == 1 {
                    one_by_64 = (rates[0], rates[1]);
                } else {
                    ten_by_64 = rates[0];
                }
            }
        }
    }
    // The engine alone: the push lane's call from one connection, no HTTP,
    // calls one after another. 32 requests a call is about what a call
    // carries under push 1 x 64 (the other half of the connections are
    // meanwhile being answered and sending their next request); 64 is
    // every connection's request in one call, with none left to overlap.
    let engine_bodies = push_bodies("fusion_engine", 1);
    let engine = std::cell::RefCell::new(connect(&dsn));
    let engine_cell = |requests: usize, secs: f64| -> (u64, f64) {
        let bodies: Vec<&[u8]> = (0..requests)
            .map(|k| engine_bodies[k % PARTITIONS].as_bytes())
            .collect();
        let binary = vec![false; requests];
        let producers: Vec<Option<&str>> = vec![None; requests];
        let mut c = engine.borrow_mut();
        let start = std::time::Instant::now();
        let mut calls = 0u64;
        while start.elapsed().as_secs_f64() < secs {
            c.query_one(
                "SELECT queen.push_fused($1, $2, $3)::text",
                &[&bodies, &binary, &producers],
            )
            .expect("queen.push_fused");
            calls += 1;
        }
        (calls * requests as u64, start.elapsed().as_secs_f64())
    };
    let engine_cells: [Cell<'_>; 2] = [
        Box::new(|s| engine_cell(32, s)),
        Box::new(|s| engine_cell(64, s)),
    ];
    let engine_rates = interleave(SECS, &engine_cells);
    println!(
        "the engine alone (queen.push_fused from one connection, no HTTP): 32 single-message \
         requests a call {:.0} req/s, 64 a call {:.0} req/s",
        engine_rates[0], engine_rates[1]
    );

    let batch_script = bodies_script(
        &dir,
        "push100",
        "/api/v1/push",
        &push_bodies("fusion_batch", 100),
    );
    let batch_cells: [Cell<'_>; 1] = [Box::new(|_| push_cell(&fused, &batch_script, 16, 100))];
    let batch = interleave(SECS, &batch_cells)[0];
    println!("push 100 per request x 16 connections: {batch:.0} msg/s");

    // Single acks of leases taken beforehand, each contender its own queue.
    let ack_script = lines_script(&dir, "/api/v1/ack");
    let fused_acks = ack_files(&mut c, &dir, "fusion_ack_fused", ROUNDS);
    let off_acks = ack_files(&mut c, &dir, "fusion_ack_off", ROUNDS);
    let ack_cell = |url: &str, files: &[PathBuf], round: &AtomicUsize| -> (u64, f64) {
        let file = &files[round.fetch_add(1, Ordering::Relaxed)];
        let w = wrk(
            url,
            &ack_script,
            64,
            SECS / ROUNDS as f64,
            &[file.display().to_string()],
        );
        let leased = (ACKS_PER_PARTITION_ROUND * ACK_PARTITIONS) as u64;
        if w.requests > leased {
            eprintln!("an ack round ran past its {leased} leased messages: the rate is too high");
        }
        (w.requests.min(leased), w.secs)
    };
    let (fused_round, off_round) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let ack_cells: [Cell<'_>; 2] = [
        Box::new(|_| ack_cell(&fused, &fused_acks, &fused_round)),
        Box::new(|_| ack_cell(&off, &off_acks, &off_round)),
    ];
    let acks = interleave(SECS, &ack_cells);
    println!(
        "single acks x 64 connections: fused {:.0} acks/s, off {:.0} acks/s; fused/off {:.2}",
        acks[0],
        acks[1],
        acks[0] / acks[1]
    );

    // Latency at low load: one connection, one request at a time. The
    // heavy cells above leave work behind (the autovacuum of what they
    // wrote, the checkpoint's writes), which landed in this cell's rounds
    // and read as the flush's tail: the cell starts once it is done.
    settle(&mut c);
    let lone = bodies_script(&dir, "lone", "/api/v1/push", &push_bodies("fusion_lone", 1));
    // Each side's figure is the median of its rounds: one round that a
    // checkpoint or another process on the machine hit moves a mean of
    // p99s far more than it moves the latency of the route.
    let (mut p50s, mut p99s) = ([vec![], vec![]], [vec![], vec![]]);
    for round in 0..LONE_ROUNDS {
        for k in 0..2 {
            let i = (k + round) % 2;
            let url = if i == 0 { &fused } else { &off };
            let w = wrk(url, &lone, 1, SECS / LONE_ROUNDS as f64, &[]);
            p50s[i].push(w.p50_ms);
            p99s[i].push(w.p99_ms);
        }
    }
    let (p50, p99) = (p50s.map(median), p99s.map(median));
    println!(
        "push 1 from one connection: fused p50 {:.3} ms p99 {:.3} ms, off p50 {:.3} ms p99 {:.3} ms; \
         p99 fused/off {:.2} (target <= 1.2)",
        p50[0],
        p99[0],
        p50[1],
        p99[1],
        p99[0] / p99[1]
    );
    println!(
        "targets: push 1 x 64 fused/off {:.2} (target >= 8), fused/ceiling {:.2} (target >= 0.35); \
         push 10 x 64 / push 100 x 16 {:.2} (target >= 0.7)",
        one_by_64.0 / one_by_64.1,
        one_by_64.0 / ceiling_rps,
        ten_by_64 / batch
    );
    println!(
        "the engine alone, 32 (64) requests a call: {:.2} ({:.2}) x push 1 x 64 off, {:.2} ({:.2}) of the ceiling",
        engine_rates[0] / one_by_64.1,
        engine_rates[1] / one_by_64.1,
        engine_rates[0] / ceiling_rps,
        engine_rates[1] / ceiling_rps
    );
}
