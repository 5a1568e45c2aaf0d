//! queen sharded behind a PL/Proxy proxy (docs/scale.md), side by side in
//! one run: the same calls on one shard directly, through a proxy of that
//! one shard, and through a proxy of three shards.
//!
//! - The proxy's cost per call: one connection, calls one after another,
//!   direct against through the proxy of one shard (pushes of 1 and of 100
//!   messages, a pop of 100 and its ack), and two bare hops, the least a
//!   call through any PL/Proxy proxy adds here: `SELECT 1` on the shard
//!   against a PL/Proxy function running it there, and the same for a
//!   one-row update whose commit waits for the WAL flush, as every call
//!   that writes does.
//! - Throughput: pushes of 100 from 8 connections, and pops of 100 with
//!   their acks from 8 connections, each connection on a queue of its own.
//!   On this machine the three shards share its two cores with the proxy
//!   and the load, so this shows what the proxy costs, not what more
//!   machines give: that is worked out from these figures in docs/scale.md.
//!
//! Usage: queen_bench_shards DIRECT_DSN PROXY1_DSN PROXY3_DSN [SECONDS]
//! (`QUEEN_BENCH_ONLY=per-call`: the calls one after another alone)

use std::time::Instant;

use postgres::types::Json;
use queen_bench::connect::Conn;
use queen_bench::payload::Popped;
use queen_bench::rounds::{interleave, run, Cell};

const CONNECTIONS: usize = 8;
const BATCH: i32 = 100;

struct Target {
    name: &'static str,
    dsn: String,
}

fn body(queue: &str, n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!("{{\"queue\":\"{queue}\",\"payload\":{{\"orderId\":{i},\"amount\":12.5,\"sku\":\"sku-{i}\"}}}}"))
        .collect();
    format!("[{}]", items.join(","))
}

fn queue_name(t: &Target, k: usize) -> String {
    format!("bench-shards-{}-{k}", t.name)
}

/// Pushes of `n` messages per call from `conns` connections, each on its
/// own queue.
fn push(t: &Target, conns: usize, n: usize, secs: f64) -> (u64, f64) {
    let workers: Vec<_> = (0..conns)
        .map(|k| {
            let mut c = Conn::new(&t.dsn);
            let b = body(&queue_name(t, k), n);
            move || {
                c.query_one("SELECT queen.push_text($1, NULL)::text", &[&b]);
                n as u64
            }
        })
        .collect();
    run(workers, secs)
}

/// Pops of `BATCH` with their acks, in a consumer group of its own each
/// time, so a cell reads the same backlog from its start.
fn pop_ack(t: &Target, conns: usize, secs: f64, group: &str) -> (u64, f64) {
    let workers: Vec<_> = (0..conns)
        .map(|k| {
            let mut c = Conn::new(&t.dsn);
            let queue = queue_name(t, k);
            let group = group.to_owned();
            move || {
                let row = c.query_one(
                    "SELECT queen.pop($1, NULL, $2, $3, '{\"subscriptionMode\": \"all\"}')",
                    &[&queue, &group, &BATCH],
                );
                let Json(popped): Json<Popped> = row.get(0);
                if popped.messages.is_empty() {
                    return 0;
                }
                let acks = ack_with_group(&popped.acks(), &group);
                c.query_one("SELECT queen.ack_text($1)::text", &[&acks]);
                popped.messages.len() as u64
            }
        })
        .collect();
    run(workers, secs)
}

fn ack_with_group(acks: &str, group: &str) -> String {
    format!(
        "{{\"consumerGroup\":{},\"acknowledgments\":{acks}}}",
        serde_json::to_string(group).unwrap()
    )
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Mean microseconds per call of `f`, one call after another for `secs`.
fn per_call(secs: f64, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        f();
        calls += 1;
    }
    start.elapsed().as_secs_f64() * 1e6 / calls as f64
}

/// Microseconds per call, each side's median round: `direct_call` on one
/// shard directly, `proxy_call` through the proxy, in alternating rounds.
fn per_call_pair(
    direct: &Target,
    proxy: &Target,
    secs: f64,
    label: &str,
    direct_call: impl Fn(&mut Conn, &str),
    proxy_call: impl Fn(&mut Conn, &str),
) -> (f64, f64) {
    let mut d = Conn::new(&direct.dsn);
    let mut p = Conn::new(&proxy.dsn);
    let qd = format!("bench-shards-lat-{label}-direct");
    let qp = format!("bench-shards-lat-{label}-proxy");
    // Warm both (plans, the proxy's connections to its shard).
    direct_call(&mut d, &qd);
    proxy_call(&mut p, &qp);
    // Rounds in alternating order; each side's figure is its median round,
    // so that a round a checkpoint or a new WAL segment fell on does not
    // weigh on one side alone.
    let (mut td, mut tp) = (Vec::new(), Vec::new());
    let rounds = 10;
    for r in 0..rounds {
        let slice = secs / rounds as f64 / 2.0;
        if r % 2 == 0 {
            td.push(per_call(slice, || direct_call(&mut d, &qd)));
            tp.push(per_call(slice, || proxy_call(&mut p, &qp)));
        } else {
            tp.push(per_call(slice, || proxy_call(&mut p, &qp)));
            td.push(per_call(slice, || direct_call(&mut d, &qd)));
        }
    }
    (median(td), median(tp))
}

/// One row of the per-call figures: `call` direct and through the proxy,
/// and the ratio a proxy whose only cost were its bare hops (`writes`
/// calls that write, each a write's hop of `write_hop` us) would have.
fn latency_pair(
    direct: &Target,
    proxy: &Target,
    secs: f64,
    label: &str,
    (write_hop, writes): (f64, f64),
    call: impl Fn(&mut Conn, &str),
) {
    let (td, tp) = per_call_pair(direct, proxy, secs, label, &call, &call);
    println!(
        "  {label:<28} direct {td:>8.0} us   through the proxy {tp:>8.0} us   proxy/direct {:.2}   (bare hops: {:.2})",
        tp / td,
        (td + write_hop * writes) / td
    );
}

/// A bare hop: `direct_sql` on the shard against `proxy_sql`, a PL/Proxy
/// function running it there; prints it and answers what the hop adds.
fn bare_hop(
    direct: &Target,
    proxy: &Target,
    secs: f64,
    label: &str,
    direct_sql: &'static str,
    proxy_sql: &'static str,
) -> f64 {
    let (hd, hp) = per_call_pair(
        direct,
        proxy,
        secs,
        label,
        |c, _| {
            c.query_one(direct_sql, &[]);
        },
        |c, _| {
            c.query_one(proxy_sql, &[]);
        },
    );
    println!(
        "  {label:<28} direct {hd:>8.0} us   through the proxy {hp:>8.0} us   one hop {:.0} us",
        hp - hd
    );
    hp - hd
}

fn main() {
    let mut args = std::env::args().skip(1);
    let direct = Target {
        name: "direct",
        dsn: args.next().expect("DIRECT_DSN"),
    };
    let proxy1 = Target {
        name: "proxy1",
        dsn: args.next().expect("PROXY1_DSN"),
    };
    let proxy3 = Target {
        name: "proxy3",
        dsn: args.next().expect("PROXY3_DSN"),
    };
    let secs: f64 = args.next().map_or(5.0, |s| s.parse().expect("SECONDS"));

    println!(
        "queen behind a PL/Proxy proxy: one shard directly, a proxy of it, a proxy of three shards"
    );
    println!("(all on this machine's two cores; ratios are side by side in one run)");
    println!();
    println!("Per call, one connection, calls one after another (median of 10 rounds a side):");
    let push1 = body("", 1);
    let push100 = body("", 100);
    // The bare hops: PL/Proxy functions of the proxy's database that run
    // `SELECT 1`, and a one-row update, on the shard, against the same
    // directly. What they add is the least any call through a PL/Proxy
    // proxy costs more here, whatever the function behind it does; a call
    // whose commit waits for the WAL flush leaves the proxy's backend
    // asleep meanwhile, and waking it again costs more than a read's hop.
    Conn::new(&direct.dsn)
        .client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS public.bench_hop_row (id integer PRIMARY KEY, n bigint NOT NULL); \
             INSERT INTO public.bench_hop_row VALUES (1, 0) ON CONFLICT DO NOTHING; \
             CREATE OR REPLACE FUNCTION public.bench_hop_write() RETURNS bigint LANGUAGE sql \
             AS 'UPDATE public.bench_hop_row SET n = n + 1 WHERE id = 1 RETURNING n'",
        )
        .expect("a one-row table and its update in the shard's database");
    Conn::new(&proxy1.dsn)
        .client
        .batch_execute(
            "CREATE OR REPLACE FUNCTION public.bench_hop(shard integer) RETURNS integer \
             LANGUAGE plproxy AS $$ CLUSTER 'queen'; RUN ON shard; SELECT 1; $$; \
             CREATE OR REPLACE FUNCTION public.bench_hop_write(shard integer) RETURNS bigint \
             LANGUAGE plproxy AS $$ CLUSTER 'queen'; RUN ON shard; SELECT public.bench_hop_write(); $$",
        )
        .expect("PL/Proxy functions in the proxy's database");
    bare_hop(
        &direct,
        &proxy1,
        secs,
        "SELECT 1 (a read's hop)",
        "SELECT 1",
        "SELECT public.bench_hop(0)",
    );
    let write_hop = bare_hop(
        &direct,
        &proxy1,
        secs,
        "update 1 row (a write's hop)",
        "SELECT public.bench_hop_write()",
        "SELECT public.bench_hop_write(0)",
    );
    latency_pair(
        &direct,
        &proxy1,
        secs,
        "push of 1",
        (write_hop, 1.0),
        |c, q| {
            c.query_one(
                "SELECT queen.push_text($1, NULL)::text",
                &[&push1.replace("\"queue\":\"\"", &format!("\"queue\":\"{q}\""))],
            );
        },
    );
    latency_pair(
        &direct,
        &proxy1,
        secs,
        "push of 100",
        (write_hop, 1.0),
        |c, q| {
            c.query_one(
                "SELECT queen.push_text($1, NULL)::text",
                &[&push100.replace("\"queue\":\"\"", &format!("\"queue\":\"{q}\""))],
            );
        },
    );
    latency_pair(
        &direct,
        &proxy1,
        secs,
        "pop of 100 and its ack",
        (write_hop, 3.0),
        |c, q| {
            c.query_one(
                "SELECT queen.push_text($1, NULL)::text",
                &[&push100.replace("\"queue\":\"\"", &format!("\"queue\":\"{q}\""))],
            );
            let row = c.query_one("SELECT queen.pop($1, NULL, NULL, 100, '{}')", &[&q]);
            let Json(popped): Json<Popped> = row.get(0);
            c.query_one("SELECT queen.ack_text($1)::text", &[&popped.acks()]);
        },
    );
    println!(
        "  (the pop row is a push of 100, a pop of 100 and an ack of 100, measured together: three"
    );
    println!("  calls that write; \"bare hops\" is the ratio the proxy would have if each call cost only a");
    println!("  write's bare hop)");
    if std::env::var("QUEEN_BENCH_ONLY").as_deref() == Ok("per-call") {
        return;
    }

    println!();
    println!("Throughput, {CONNECTIONS} connections, {BATCH} messages per call, msgs/s:");
    let targets = [&direct, &proxy1, &proxy3];
    let cells: Vec<Cell<'_>> = targets
        .iter()
        .map(|t| -> Cell<'_> { Box::new(move |s| push(t, CONNECTIONS, BATCH as usize, s)) })
        .collect();
    let pushes = interleave(secs * 3.0, &cells);
    let groups = std::cell::Cell::new(0u32);
    let cells: Vec<Cell<'_>> = targets
        .iter()
        .map(|t| -> Cell<'_> {
            let groups = &groups;
            Box::new(move |s| {
                groups.set(groups.get() + 1);
                pop_ack(t, CONNECTIONS, s, &format!("bench-{}", groups.get()))
            })
        })
        .collect();
    let pops = interleave(secs * 3.0, &cells);
    println!(
        "  {:<22} {:>12} {:>16} {:>16}",
        "", "one shard", "proxy, 1 shard", "proxy, 3 shards"
    );
    println!(
        "  {:<22} {:>12.0} {:>16.0} {:>16.0}",
        "push", pushes[0], pushes[1], pushes[2]
    );
    println!(
        "  {:<22} {:>12.0} {:>16.0} {:>16.0}",
        "pop + ack", pops[0], pops[1], pops[2]
    );
    println!(
        "  proxy, 1 shard / direct: push {:.2}, pop + ack {:.2}; 3 shards / 1 shard through the proxy: push {:.2}, pop + ack {:.2}",
        pushes[1] / pushes[0],
        pops[1] / pops[0],
        pushes[2] / pushes[1],
        pops[2] / pops[1]
    );
}
