//! Sweeper figures, side by side in one run of `make bench WHAT=sweeper`:
//!
//! 1. `timers N`: 100k timers due over 10 s, scheduled ahead; fired per
//!    second and fire lateness p50/p99/max, on a cluster with N sweepers
//!    (the script restarts the cluster between 1 and 2). Each run appends
//!    its figures to a file; `report` prints them and their ratios.
//! 2. `kv`: KV churn at the highest write rate two clients sustain, keys
//!    living 1 s; rows present and expired-but-present each second, which
//!    must stay flat (bounded) rather than grow with what was written.
//! 3. `quiet`: the cost of a quiet cycle, transactions per second the
//!    sweepers run while nothing is due, with no timers at all vs with
//!    100k timers promised for next week (the cost follows the work, not
//!    the table).
//!
//! Usage: queen_bench_sweeper <dsn> timers <workers> <results-file>
//!        queen_bench_sweeper <dsn> report <results-file>
//!        queen_bench_sweeper <dsn> kv | quiet

use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use postgres::Client;
use queen_bench::cluster::TRANSACTIONS;
use queen_bench::connect::connect;
use queen_bench::rounds::percentile;
use serde_json::{json, Value};

const TIMERS: i64 = 100_000;
const WINDOW_MS: i64 = 10_000;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn messages_in(c: &mut Client, queue: &str) -> i64 {
    c.query_one(
        "SELECT COALESCE(sum(COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) + 1), 0)::int8
           FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
          WHERE q.name = $1",
        &[&queue],
    )
    .unwrap()
    .get(0)
}

fn iso_ms(s: &str) -> i64 {
    // 2026-11-30T11:14:38.294Z
    let (date, time) = s.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let (hms, ms) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<i64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2]) * 1000) + ms.parse::<i64>().unwrap()
}

fn timers(dsn: &str, workers: &str, out: &str) {
    let mut c = connect(dsn);
    let queue = format!("bench-timers-{}", now_ms());
    // Everything is scheduled before the first is due.
    let base = now_ms() + 15_000;
    let started = Instant::now();
    let chunk = 1000;
    for k in 0..(TIMERS / chunk) {
        let sent = now_ms();
        let ops: Vec<Value> = (0..chunk)
            .map(|j| {
                let i = k * chunk + j;
                let due = base + i * WINDOW_MS / TIMERS;
                let payload = json!({"due": due}).to_string();
                let payload = base64::engine::general_purpose::STANDARD.encode(payload);
                json!({
                    "op": "schedule",
                    "queue": queue,
                    "timerKey": format!("t{i}"),
                    "partition": format!("p{}", i % 16),
                    "payload": payload,
                    "delayMs": due - sent,
                })
            })
            .collect();
        c.query_one(
            "SELECT queen.timers($1)::text",
            &[&json!({ "operations": ops })],
        )
        .unwrap();
    }
    let scheduling = started.elapsed();
    assert!(
        now_ms() < base,
        "scheduling took longer than the head start"
    );
    while messages_in(&mut c, &queue) < TIMERS {
        assert!(
            now_ms() < base + WINDOW_MS + 300_000,
            "every timer fired within five minutes"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let done = now_ms();
    let mut lateness = Vec::with_capacity(TIMERS as usize);
    loop {
        let popped: Value = c
            .query_one(
                "SELECT queen.pop($1, NULL, NULL, 10000, '{\"autoAck\": true}')::jsonb",
                &[&queue],
            )
            .unwrap()
            .get(0);
        let msgs = popped["messages"].as_array().cloned().unwrap_or_default();
        if msgs.is_empty() {
            break;
        }
        for m in msgs {
            lateness.push(
                iso_ms(m["createdAt"].as_str().unwrap()) - m["data"]["due"].as_i64().unwrap(),
            );
        }
    }
    lateness.sort_unstable();
    let fired_per_s = TIMERS as f64 / ((done - base) as f64 / 1000.0);
    let row = json!({
        "workers": workers,
        "schedule_s": scheduling.as_secs_f64(),
        "fired_per_s": fired_per_s,
        "p50": percentile(&lateness, 0.5),
        "p99": percentile(&lateness, 0.99),
        "max": lateness.last(),
        "n": lateness.len(),
    });
    println!(
        "timers, {workers} sweeper(s): {TIMERS} due over {} s, scheduled in {:.1} s; \
         all fired {:.1} s after the first was due ({fired_per_s:.0}/s); \
         lateness ms p50 {} p99 {} max {} ({} read back)",
        WINDOW_MS / 1000,
        scheduling.as_secs_f64(),
        (done - base) as f64 / 1000.0,
        row["p50"],
        row["p99"],
        row["max"],
        row["n"]
    );
    let mut all: Vec<Value> = std::fs::read_to_string(out)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    all.push(row);
    std::fs::write(out, serde_json::to_string(&all).unwrap()).unwrap();
}

fn report(out: &str) {
    let all: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out).expect("results of the timer runs"))
            .unwrap();
    let (Some(one), Some(two)) = (
        all.iter().find(|r| r["workers"] == "1"),
        all.iter().find(|r| r["workers"] == "2"),
    ) else {
        println!("timers: need runs with 1 and 2 sweepers");
        return;
    };
    let f = |r: &Value, k: &str| r[k].as_f64().unwrap_or(0.0).max(1.0);
    println!(
        "timers, 2 vs 1 sweepers: fired/s {:.2}x, lateness p50 {:.2}x, p99 {:.2}x, max {:.2}x \
         (below 1: later is less)",
        f(two, "fired_per_s") / f(one, "fired_per_s"),
        f(two, "p50") / f(one, "p50"),
        f(two, "p99") / f(one, "p99"),
        f(two, "max") / f(one, "max"),
    );
}

fn kv_churn(dsn: &str) {
    let seconds = 20;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let dsn = dsn.to_owned();
            thread::spawn(move || {
                let mut c = connect(&dsn);
                let mut n = 0i64;
                while Instant::now() < deadline {
                    let ops: Vec<Value> = (0..100)
                        .map(|i| {
                            json!({
                                "op": "put",
                                "ns": "bench-churn",
                                "key": format!("w{w}-{n}-{i}"),
                                "value": {"n": n},
                                "ttlSeconds": 1,
                            })
                        })
                        .collect();
                    c.query_one(
                        "SELECT queen.kv($1)::text",
                        &[&json!({ "operations": ops })],
                    )
                    .unwrap();
                    n += 1;
                }
                n * 100
            })
        })
        .collect();
    let mut c = connect(dsn);
    let mut samples = Vec::new();
    for s in 0..seconds {
        thread::sleep(Duration::from_secs(1));
        let row = c
            .query_one(
                "SELECT count(*), count(*) FILTER (WHERE expires_at <= statement_timestamp())
                   FROM queen.kv WHERE ns = 'bench-churn'",
                &[],
            )
            .unwrap();
        let (present, expired): (i64, i64) = (row.get(0), row.get(1));
        samples.push((present, expired));
        println!(
            "kv churn t={:>2}s: rows present {present:>6}, expired but present {expired:>6}",
            s + 1
        );
    }
    let written: i64 = writers.into_iter().map(|h| h.join().unwrap()).sum();
    let rate = written as f64 / seconds as f64;
    let half = samples.len() / 2;
    let max_expired = |xs: &[(i64, i64)]| xs.iter().map(|x| x.1).max().unwrap_or(0) as f64;
    let peak = samples.iter().map(|x| x.0).max().unwrap_or(0);
    println!(
        "kv churn: {written} keys written at {rate:.0}/s, each living 1 s; \
         peak rows present {peak} = {:.2} s of writes; \
         expired-but-present peak {:.2} s of writes; \
         its peak in the second half vs the first: {:.2}x \
         (about 1 or below: bounded, not growing)",
        peak as f64 / rate,
        max_expired(&samples) / rate,
        max_expired(&samples[half..]) / max_expired(&samples[..half]).max(1.0)
    );
}

/// Sweeper transactions per second over `secs` with no client work (the
/// database's commit count, which the workers report every cycle), and
/// probes per second (the sweepers' own count).
fn quiet_rates(c: &mut Client, secs: u64) -> (f64, f64) {
    let q = format!(
        "SELECT ({TRANSACTIONS}), (queen.sweeper_metrics()::jsonb ->> 'probesTotal')::int8"
    );
    c.batch_execute("SELECT pg_stat_clear_snapshot()").unwrap();
    let before = c.query_one(&q, &[]).unwrap();
    thread::sleep(Duration::from_secs(secs));
    c.batch_execute("SELECT pg_stat_clear_snapshot()").unwrap();
    let after = c.query_one(&q, &[]).unwrap();
    let tx = after.get::<_, i64>(0) - before.get::<_, i64>(0);
    let probes = after.get::<_, i64>(1) - before.get::<_, i64>(1);
    // Our own two reads and two clears are not the sweepers'.
    (
        (tx - 4).max(0) as f64 / secs as f64,
        probes as f64 / secs as f64,
    )
}

fn quiet(dsn: &str) {
    let mut c = connect(dsn);
    c.batch_execute("DELETE FROM queen.log_timers; DELETE FROM queen.kv")
        .unwrap();
    thread::sleep(Duration::from_secs(2));
    let (empty, empty_probes) = quiet_rates(&mut c, 10);
    let mut t = c.transaction().unwrap();
    t.execute(
        "INSERT INTO queen.log_timers
                (queue, timer_key, partition, payload, transaction_id, message_id, deliver_at)
         SELECT 'bench-quiet', 't' || i, 'Default', '1', 't' || i, gen_random_uuid(),
                now() + interval '7 days' + i * interval '1 ms'
           FROM generate_series(1, $1::int8) i",
        &[&TIMERS],
    )
    .unwrap();
    t.commit().unwrap();
    c.batch_execute("ANALYZE queen.log_timers").unwrap();
    thread::sleep(Duration::from_secs(2));
    let (loaded, loaded_probes) = quiet_rates(&mut c, 10);
    println!(
        "quiet cycle: {empty:.1} transactions/s ({empty_probes:.1} probes/s) with no timers, \
         {loaded:.1}/s ({loaded_probes:.1} probes/s) with {TIMERS} promised for next week: {:.2}x",
        loaded / empty.max(0.1)
    );
    c.batch_execute("DELETE FROM queen.log_timers WHERE queue = 'bench-quiet'")
        .unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dsn = &args[1];
    match args.get(2).map(String::as_str) {
        Some("timers") => timers(dsn, &args[3], &args[4]),
        Some("report") => report(&args[3]),
        Some("kv") => kv_churn(dsn),
        Some("quiet") => quiet(dsn),
        _ => panic!(
            "usage: queen_bench_sweeper <dsn> timers <workers> <file> | report <file> | kv | quiet"
        ),
    }
}
