//! Retention figures, each a ratio measured side by side in one run:
//!
//! 1. drain of an all-stale backlog at 1x and 2x its size (linear, not quadratic);
//! 2. one cycle over 10k vs 500k idle partitions with the same 100 due
//!    (cost follows the work, not the partition count);
//! 3. push p99 while a drain runs in the same partition vs without;
//! 4. segments deleted per second vs produced per second at the highest push
//!    rate, with 1 and 4 step workers.
//!
//! Usage: queen_bench_retention <dsn>

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use postgres::Client;
use queen_bench::connect::{connect, dsn_or_default, scalar};
use queen_bench::payload::push_item;
use queen_bench::rounds::{self, percentile};
use serde_json::{json, Value};

/// ALTER SYSTEM (which refuses a transaction block) and a reload.
fn set_system(c: &mut Client, setting: &str, value: Option<&str>) {
    match value {
        Some(v) => c
            .batch_execute(&format!("ALTER SYSTEM SET {setting} = {v}"))
            .unwrap(),
        None => c
            .batch_execute(&format!("ALTER SYSTEM RESET {setting}"))
            .unwrap(),
    }
    c.batch_execute("SELECT pg_reload_conf()").unwrap();
}

fn reset(c: &mut Client) {
    // A bench cluster: emptied wholesale between figures (CASCADE: with
    // every table that refers to a queue).
    c.batch_execute(
        "TRUNCATE queen.queues, queen.log_partitions, queen.log_segments, queen.log_txns,
                  queen.log_consumers, queen.consumer_groups, queen.log_dlq,
                  queen.retention_history, queen.retention_backoff,
                  queen.queue_terminal_rollups CASCADE;
         UPDATE queen.maintenance_leases SET enabled = false;",
    )
    .unwrap();
}

/// A queue with one partition holding `segments` stale one-message
/// segments (written directly, all two hours old). Answers the partition id.
fn stale_backlog(c: &mut Client, queue: &str, segments: i64) -> i64 {
    c.query_one(
        "SELECT queen.push($1)",
        &[&json!([{"queue": queue, "payload": {"seed": true}}])],
    )
    .unwrap();
    let pid: i64 = c
        .query_one(
            "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
              WHERE q.name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0);
    c.execute(
        "INSERT INTO queen.log_segments
                (partition_id, base_offset, end_offset, frame_count, created_at, blob)
         SELECT $1, g, g, 1, now() - interval '2 hours' + g * interval '1 microsecond', s.blob
           FROM generate_series(1::int8, $2::int8) g,
                (SELECT blob FROM queen.log_segments WHERE partition_id = $1) s",
        &[&pid, &(segments - 1)],
    )
    .unwrap();
    c.execute(
        "INSERT INTO queen.log_txns (partition_id, base_offset, created_at, txn_hashes)
         SELECT $1, g, now() - interval '2 hours', ARRAY[g]::int8[]
           FROM generate_series(1::int8, $2::int8) g",
        &[&pid, &(segments - 1)],
    )
    .unwrap();
    c.execute(
        "UPDATE queen.log_segments SET created_at = now() - interval '3 hours'
          WHERE partition_id = $1 AND base_offset = 0",
        &[&pid],
    )
    .unwrap();
    c.execute(
        "UPDATE queen.log_partitions SET oldest_live_at = now() - interval '3 hours',
                last_write_at = now() - interval '1 hour' WHERE id = $1",
        &[&pid],
    )
    .unwrap();
    c.batch_execute("VACUUM ANALYZE queen.log_segments")
        .unwrap();
    pid
}

/// One retention step of at most `batch` segments, as the cycle makes it.
fn step(c: &mut Client, pid: i64, batch: i32) -> Value {
    c.query_one(
        "SELECT queen_internal.log_retention_step_v1(
                $1, now() - interval '1 hour', NULL, $2)::json",
        &[&pid, &batch],
    )
    .unwrap()
    .get(0)
}

/// Drains a partition with autocommitting steps, as the cycle does.
fn drain(c: &mut Client, pid: i64, batch: i32) -> (Duration, i64) {
    let started = Instant::now();
    let mut deleted = 0;
    loop {
        let r = step(c, pid, batch);
        deleted += r["deleted"].as_i64().unwrap();
        if r["done"] == true || r["deleted"] == 0 {
            return (started.elapsed(), deleted);
        }
    }
}

fn p99(mut v: Vec<Duration>) -> Duration {
    v.sort();
    percentile(&v, 0.99)
}

fn push_latencies(c: &mut Client, queue: &str, secs: f64) -> Vec<Duration> {
    let mut out = Vec::new();
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let items: Value = Value::Array(
        (0..10)
            .map(|i| push_item(queue, None, json!({"i": i, "note": "latency probe"})))
            .collect(),
    );
    while Instant::now() < until {
        let t = Instant::now();
        c.execute("SELECT queen.push($1)", &[&items]).unwrap();
        out.push(t.elapsed());
    }
    out
}

/// Turns retention on for `queue`, keeping messages `seconds`.
fn keep_for(c: &mut Client, queue: &str, seconds: u32) {
    c.query_one(
        &format!(
            "SELECT queen.configure($1, \
             '{{\"retentionEnabled\": true, \"retentionSeconds\": {seconds}}}')"
        ),
        &[&queue],
    )
    .unwrap();
}

/// `count` idle partitions (recent watermarks, nothing due) on queue.
fn idle_partitions(c: &mut Client, queue: &str, count: i64) {
    keep_for(c, queue, 3600);
    c.execute(
        "INSERT INTO queen.log_partitions
                (queue_id, name, oldest_live_at, oldest_txn_at, last_write_at)
         SELECT q.id, 'idle-' || g, now(), now(), now()
           FROM queen.queues q,
                generate_series((SELECT count(*) FROM queen.log_partitions) + 1,
                                (SELECT count(*) FROM queen.log_partitions) + $2::int8) g
          WHERE q.name = $1",
        &[&queue, &count],
    )
    .unwrap();
}

/// Makes everything a queue holds two hours older (segments and watermarks).
fn age_queue(c: &mut Client, queue: &str) {
    c.execute(
        "UPDATE queen.log_segments s SET created_at = s.created_at - interval '2 hours'
           FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
          WHERE s.partition_id = p.id AND q.name = $1",
        &[&queue],
    )
    .unwrap();
    c.execute(
        "UPDATE queen.log_partitions p SET oldest_live_at = oldest_live_at - interval '2 hours'
           FROM queen.queues q WHERE q.id = p.queue_id AND q.name = $1",
        &[&queue],
    )
    .unwrap();
}

fn due_partitions(c: &mut Client, queue: &str, count: usize) {
    keep_for(c, queue, 60);
    for i in 0..count {
        let item = push_item(queue, Some(&format!("due-{i}")), json!(i));
        c.query_one("SELECT queen.push($1)", &[&Value::Array(vec![item])])
            .unwrap();
    }
    age_queue(c, queue);
}

fn timed_cycle(c: &mut Client) -> (Duration, Value) {
    let t = Instant::now();
    let mut txn = c.transaction().unwrap();
    let r: Value = txn
        .query_one("SELECT queen_internal.retention_run_cycle()", &[])
        .unwrap()
        .get(0);
    txn.commit().unwrap();
    (t.elapsed(), r)
}

/// Pushes at full speed into 16 partitions for `secs`; answers segments/s.
fn produce(dsn: &str, queue: &str, secs: f64) -> f64 {
    // Two pushers, each connecting when it first runs; a call of 10
    // messages into one partition is one segment.
    let workers: Vec<_> = (0..2)
        .map(|k| {
            let mut c: Option<Client> = None;
            let mut n = 0usize;
            move || {
                let c = c.get_or_insert_with(|| connect(dsn));
                let partition = format!("p{}", (n * 2 + k) % 16);
                let items = Value::Array(
                    (0..10)
                        .map(|i| push_item(queue, Some(&partition), json!(i)))
                        .collect(),
                );
                c.execute("SELECT queen.push($1)", &[&items]).unwrap();
                n += 1;
                1
            }
        })
        .collect();
    let (calls, took) = rounds::run(workers, secs);
    calls as f64 / took
}

/// Lets the workers drain everything stale with `parallelism` step workers;
/// answers segments deleted per second.
fn worker_drain(c: &mut Client, queue: &str, parallelism: i32) -> f64 {
    set_system(
        c,
        "queen.retention_parallelism",
        Some(&parallelism.to_string()),
    );
    thread::sleep(Duration::from_millis(500));
    age_queue(c, queue);
    let total = scalar(c, "SELECT count(*) FROM queen.log_segments");
    c.batch_execute(
        "UPDATE queen.maintenance_leases
            SET enabled = true, next_due_at = now(), lease_holder = NULL, lease_expires_at = NULL
          WHERE task = 'retention'",
    )
    .unwrap();
    let t = Instant::now();
    while scalar(c, "SELECT count(*) FROM queen.log_segments") > 0
        && t.elapsed() < Duration::from_secs(300)
    {
        thread::sleep(Duration::from_millis(20));
    }
    let rate = total as f64 / t.elapsed().as_secs_f64();
    c.batch_execute("UPDATE queen.maintenance_leases SET enabled = false WHERE task = 'retention'")
        .unwrap();
    rate
}

fn main() {
    let dsn = dsn_or_default(std::env::args().nth(1));
    let mut c = connect(&dsn);
    reset(&mut c);
    set_system(&mut c, "queen.retention_batch_size", Some("1000"));

    println!("retention bench\n");
    // 1. Linear drain: each size twice, alternating, the faster run of each
    // (a checkpoint or autovacuum landing in one run is noise, not scaling).
    let n = 50_000;
    let mut best = [(Duration::MAX, 0i64); 2];
    for round in 0..4 {
        let k = round % 2;
        let pid = stale_backlog(&mut c, &format!("drain-{round}"), n * (k as i64 + 1));
        c.batch_execute("CHECKPOINT").unwrap();
        let (t, d) = drain(&mut c, pid, 1000);
        if t < best[k].0 {
            best[k] = (t, d);
        }
        reset(&mut c);
    }
    let [(t1, d1), (t2, d2)] = best;
    println!(
        "drain of a stale backlog: {d1} segments in {:.2} s, {d2} in {:.2} s; \
         time ratio 2x/1x = {:.2} (target <= 2.3)",
        t1.as_secs_f64(),
        t2.as_secs_f64(),
        t2.as_secs_f64() / t1.as_secs_f64()
    );
    reset(&mut c);

    // 2. Cycle cost vs idle partitions.
    due_partitions(&mut c, "due", 100);
    idle_partitions(&mut c, "idle", 10_000);
    c.batch_execute("VACUUM ANALYZE queen.log_partitions")
        .unwrap();
    let (small, r_small) = timed_cycle(&mut c);
    due_partitions(&mut c, "due2", 100);
    c.batch_execute("SELECT queen.queue_delete('due')").unwrap();
    idle_partitions(&mut c, "idle", 490_000);
    c.batch_execute("VACUUM ANALYZE queen.log_partitions")
        .unwrap();
    let (large, r_large) = timed_cycle(&mut c);
    println!(
        "one cycle, 100 due: {:.1} ms over 10k partitions (due {}), \
         {:.1} ms over 500k (due {}); ratio {:.2} (target <= 1.5)",
        small.as_secs_f64() * 1000.0,
        r_small["due"],
        large.as_secs_f64() * 1000.0,
        r_large["due"],
        large.as_secs_f64() / small.as_secs_f64()
    );
    reset(&mut c);

    // 3. Push latency with and without a drain in the same partition, for
    // the default batch and a smaller one. Quiet and draining slices take
    // turns (rounds::ROUNDS of each, in alternating order, 4 s of each in
    // all), so a change in the machine's load falls on both alike; the
    // drainer makes retention steps back to back during the draining
    // slices only, from a backlog it can not finish in them. One cell
    // pushes to another queue during the same drain: what the drain costs a
    // push in CPU and WAL alone, with no lock between them. The last has
    // three more producers push to the drained partition throughout, quiet
    // slices and draining alike, so that a step's watermark move often
    // finds a push in flight: how many steps give way and are made again.
    for (batch, same, producers) in [
        (1000, true, 0),
        (250, true, 0),
        (1000, false, 0),
        (1000, true, 3),
    ] {
        let queue = format!("lat-{batch}-{same}-{producers}");
        let probe_queue = if same {
            queue.clone()
        } else {
            format!("{queue}-probe")
        };
        let pid = stale_backlog(&mut c, &queue, 5_000_000);
        c.batch_execute("CHECKPOINT").unwrap();
        let draining = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let drainer = {
            let dsn = dsn.clone();
            let (draining, stop) = (Arc::clone(&draining), Arc::clone(&stop));
            thread::spawn(move || {
                let mut c = connect(&dsn);
                let (mut ran_dry, mut steps, mut redone) = (false, 0, 0);
                while !stop.load(Ordering::Relaxed) {
                    if !draining.load(Ordering::Relaxed) {
                        thread::sleep(Duration::from_micros(200));
                        continue;
                    }
                    let r = step(&mut c, pid, batch);
                    steps += 1;
                    redone += (r["redone"] == true) as u32;
                    if r["deleted"] == 0 {
                        ran_dry = true;
                        thread::sleep(Duration::from_micros(200));
                    }
                }
                (ran_dry, steps, redone)
            })
        };
        let producing: Vec<_> = (0..producers)
            .map(|_| {
                let (dsn, queue, stop) = (dsn.clone(), queue.clone(), Arc::clone(&stop));
                thread::spawn(move || {
                    let mut c = connect(&dsn);
                    while !stop.load(Ordering::Relaxed) {
                        push_latencies(&mut c, &queue, 0.05);
                    }
                })
            })
            .collect();
        let mut probe = connect(&dsn);
        let (mut quiet, mut busy) = (Vec::new(), Vec::new());
        let slice = 4.0 / rounds::ROUNDS as f64;
        for round in 0..rounds::ROUNDS {
            for drain_now in [round % 2 == 1, round % 2 == 0] {
                draining.store(drain_now, Ordering::Relaxed);
                // The drainer's step in flight, if any, ends first.
                thread::sleep(Duration::from_millis(20));
                let got = push_latencies(&mut probe, &probe_queue, slice);
                if drain_now {
                    busy.extend(got)
                } else {
                    quiet.extend(got)
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let (ran_dry, steps, redone) = drainer.join().unwrap();
        producing.into_iter().for_each(|p| p.join().unwrap());
        let (q99, b99) = (p99(quiet), p99(busy));
        println!(
            "push p99 (10 messages), drain batch {batch}{}{}: {:.2} ms quiet, \
             {:.2} ms during the drain; ratio {:.2}{}",
            if same { "" } else { " of another queue" },
            match producers {
                0 => String::new(),
                n => format!(", {n} more producers on it"),
            },
            q99.as_secs_f64() * 1000.0,
            b99.as_secs_f64() * 1000.0,
            b99.as_secs_f64() / q99.as_secs_f64(),
            if same && producers == 0 {
                " (target <= 2)"
            } else {
                ""
            }
        );
        println!("  {steps} steps, {redone} made again after giving way to pushes");
        if ran_dry {
            println!("  the drain ran out of backlog: the second figure is a lower bound");
        }
        reset(&mut c);
    }

    // 5. The cost of carry-forward: drain rate with 0%, 1% and 10% of the
    // messages dead-lettered (narrow rows the drain must widen first).
    let mut base_rate = 0.0;
    for percent in [0i64, 1, 10] {
        let queue = format!("cf-{percent}");
        let pid = stale_backlog(&mut c, &queue, 50_000);
        if percent > 0 {
            c.execute(
                "INSERT INTO queen.log_dlq
                        (queue_id, partition_id, consumer_group, message_offset, transaction_id,
                         attempts)
                 SELECT p.queue_id, p.id, 'g', g, 'failed-' || g, 1
                   FROM queen.log_partitions p, generate_series(0::int8, 49999::int8) g
                  WHERE p.id = $1 AND g % (100 / $2::int8) = 0",
                &[&pid, &percent],
            )
            .unwrap();
        }
        c.batch_execute("CHECKPOINT").unwrap();
        let (t, d) = drain(&mut c, pid, 1000);
        let rate = d as f64 / t.as_secs_f64();
        if percent == 0 {
            base_rate = rate;
        }
        let widened = scalar(
            &mut c,
            &format!(
                "SELECT count(*) FROM queen.log_dlq
                  WHERE partition_id = {pid} AND created_at IS NOT NULL"
            ),
        );
        println!(
            "drain with {percent}% dead-lettered: {rate:.0} segments/s \
             ({widened} rows widened); rate vs 0%: {:.2}",
            rate / base_rate
        );
        reset(&mut c);
    }

    // 4. Deletion rate vs production rate.
    for parallelism in [1, 4] {
        let queue = format!("rate-{parallelism}");
        keep_for(&mut c, &queue, 60);
        let produced = produce(&dsn, &queue, 8.0);
        let deleted = worker_drain(&mut c, &queue, parallelism);
        println!(
            "parallelism {parallelism}: produced {produced:.0} segments/s at full push speed, \
             deleted {deleted:.0} segments/s; ratio {:.2} (target >= 3)",
            deleted / produced
        );
        reset(&mut c);
    }
    set_system(&mut c, "queen.retention_parallelism", None);
    set_system(&mut c, "queen.retention_batch_size", None);
    c.batch_execute("UPDATE queen.maintenance_leases SET enabled = true")
        .unwrap();
}
