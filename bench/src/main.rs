//! Push and pop+ack throughput of queen, pgmq and the physical ceiling (a
//! plain INSERT of the same compressed bytes), measured side by side in one
//! run on one cluster, printed as figures and ratios.
//!
//! Usage: queen_bench <dsn> [seconds per cell]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

const WORDS: &[&str] = &[
    "alpha",
    "bravo",
    "delta",
    "urgent",
    "gift",
    "express",
    "standard",
    "fragile",
    "returns",
    "priority",
    "weekend",
    "invoice",
    "warehouse",
    "north",
    "south",
    "east",
    "west",
    "bulk",
    "retail",
    "online",
];
const NAMES: &[&str] = &[
    "Ada Lovelace",
    "Alan Turing",
    "Grace Hopper",
    "Edsger Dijkstra",
    "Barbara Liskov",
    "Ken Thompson",
];
const CURRENCIES: &[&str] = &["EUR", "USD", "GBP", "CHF", "JPY"];
const STATUSES: &[&str] = &["created", "paid", "packed", "shipped", "delivered"];

/// An order event of about 256 bytes with varied fields.
fn payload(rng: &mut SmallRng) -> Value {
    let items: Vec<Value> = (0..rng.random_range(1..=2))
        .map(|_| json!({"sku": format!("SKU-{:06}", rng.random_range(0..1_000_000)), "qty": rng.random_range(1..10),
                        "price": (rng.random_range(100..100_000) as f64) / 100.0}))
        .collect();
    let note: Vec<&str> = (0..rng.random_range(1..4))
        .map(|_| WORDS[rng.random_range(0..WORDS.len())])
        .collect();
    json!({
        "orderId": format!("{:016x}", rng.random::<u64>()),
        "customer": {"id": rng.random_range(1..5_000_000), "name": NAMES[rng.random_range(0..NAMES.len())]},
        "items": items,
        "total": (rng.random_range(100..1_000_000) as f64) / 100.0,
        "currency": CURRENCIES[rng.random_range(0..CURRENCIES.len())],
        "status": STATUSES[rng.random_range(0..STATUSES.len())],
        "ts": 1_790_000_000_000i64 + rng.random_range(0..100_000_000i64),
        "note": note.join(" "),
    })
}

struct Bench {
    dsn: String,
    secs: f64,
    conns: usize,
}

/// A connection that prepares each statement text once and then only
/// binds and executes it, one round trip per call, as a client library with
/// a statement cache does (sqlx, pgx, JDBC). Every contender is called
/// through one of these.
struct Conn {
    client: Client,
    prepared: HashMap<&'static str, Statement>,
}

impl Conn {
    fn statement(&mut self, sql: &'static str) -> Statement {
        let Conn { client, prepared } = self;
        prepared
            .entry(sql)
            .or_insert_with(|| client.prepare(sql).expect("prepare"))
            .clone()
    }

    fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> u64 {
        let st = self.statement(sql);
        self.client
            .execute(&st, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Vec<Row> {
        let st = self.statement(sql);
        self.client
            .query(&st, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn query_one(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Row {
        let st = self.statement(sql);
        self.client
            .query_one(&st, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

impl Bench {
    fn connect(&self) -> Client {
        Client::connect(&self.dsn, NoTls).expect("connect")
    }

    /// Runs `work` on `conns` connections for the cell's duration; `work`
    /// returns the messages one call handled. Answers the messages handled
    /// and the seconds it took.
    fn run<F>(&self, make: impl Fn(usize) -> F) -> (u64, f64)
    where
        F: FnMut(&mut Conn) -> u64 + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let total = Arc::new(AtomicU64::new(0));
        // Connected before the clock starts: a client keeps its connections.
        let conns: Vec<Conn> = (0..self.conns)
            .map(|_| Conn {
                client: self.connect(),
                prepared: HashMap::new(),
            })
            .collect();
        let start = Instant::now();
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(k, mut c)| {
                let mut work = make(k);
                let stop = Arc::clone(&stop);
                let total = Arc::clone(&total);
                thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let n = work(&mut c);
                        total.fetch_add(n, Ordering::Relaxed);
                        if n == 0 {
                            thread::sleep(Duration::from_millis(1));
                        }
                    }
                })
            })
            .collect();
        thread::sleep(Duration::from_secs_f64(self.secs));
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().expect("worker");
        }
        (total.load(Ordering::Relaxed), start.elapsed().as_secs_f64())
    }
}

/// Rounds each comparison is split into. The contenders take turns, a
/// slice of the cell's time each per round, in an order that rotates, so a
/// change in the machine's load falls on all of them alike.
const ROUNDS: usize = 5;

type Cell<'a> = Box<dyn Fn(&Bench) -> (u64, f64) + 'a>;

/// Messages per second of each contender, measured in interleaved rounds.
fn interleave(b: &Bench, cells: &[Cell<'_>]) -> Vec<f64> {
    let slice = Bench {
        dsn: b.dsn.clone(),
        secs: b.secs / ROUNDS as f64,
        conns: b.conns,
    };
    let mut msgs = vec![0u64; cells.len()];
    let mut secs = vec![0f64; cells.len()];
    for round in 0..ROUNDS {
        for k in 0..cells.len() {
            let i = (k + round) % cells.len();
            let (m, s) = cells[i](&slice);
            msgs[i] += m;
            secs[i] += s;
        }
    }
    msgs.iter().zip(&secs).map(|(m, s)| *m as f64 / s).collect()
}

fn batch_of(rng: &mut SmallRng, n: usize) -> Vec<Value> {
    (0..n).map(|_| payload(rng)).collect()
}

/// Payloads generated once, as JSON text: every cell draws its messages from
/// here in turn, so the client's share of the two cores goes to sending, not
/// to generating, and every contender gets the same bytes.
const POOL_SIZE: usize = 8192;

fn pool() -> &'static [String] {
    static POOL: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let mut rng = SmallRng::seed_from_u64(42);
        (0..POOL_SIZE)
            .map(|_| payload(&mut rng).to_string())
            .collect()
    })
}

/// `n` payloads from the pool, starting at `*cursor` (which moves on).
fn take(cursor: &mut usize, n: usize) -> Vec<&'static str> {
    let p = pool();
    let out = (0..n)
        .map(|i| p[(*cursor + i) % p.len()].as_str())
        .collect();
    *cursor = (*cursor + n) % p.len();
    out
}

/// A transaction id the engine has not seen: the run's start time and a
/// counter no cell or round starts again.
fn unique_txn() -> String {
    static RUN: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUN.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    });
    format!(
        "{run:x}-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// `with_ids`: every item carries its own transaction id, which the push
/// checks against the queue's dedup window.
fn queen_push(
    b: &Bench,
    queue: &str,
    batch: usize,
    partitions: usize,
    with_ids: bool,
) -> (u64, f64) {
    let queue = queue.to_owned();
    b.run(move |k| {
        let queue = queue.clone();
        let mut cursor = k * 1000;
        let mut call = 0usize;
        move |c: &mut Conn| {
            let partition = format!("p{}", (call * 7 + k) % partitions);
            call += 1;
            // JSON text, as a client holding JSON sends it: parsed once, by queen.
            let mut text = String::with_capacity(batch * 320);
            text.push('[');
            for (i, p) in take(&mut cursor, batch).into_iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                let txn = if with_ids {
                    format!("\"transactionId\":\"{}\",", unique_txn())
                } else {
                    String::new()
                };
                text.push_str(&format!(
                    "{{\"queue\":\"{queue}\",\"partition\":\"{partition}\",{txn}\"payload\":{p}}}"
                ));
            }
            text.push(']');
            c.execute("SELECT queen.push_text($1)", &[&text]);
            batch as u64
        }
    })
}

/// The same messages as a binary push body (QPB1, counts-only answer).
/// `packed`: framed and compressed by the client, as queen-mq's binary push
/// with compression sends them (flag 8): the client mints each message id,
/// frames the messages and compresses them, inside the clock; the engine
/// checks the frames and keeps the bytes as they are.
fn queen_push_binary(
    b: &Bench,
    queue: &str,
    batch: usize,
    partitions: usize,
    packed: bool,
) -> (u64, f64) {
    use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup, PushItem};
    let queue = queue.to_owned();
    b.run(move |k| {
        let queue = queue.clone();
        let mut cursor = k * 1000;
        let mut call = 0usize;
        move |c: &mut Conn| {
            let partition = format!("p{}", (call * 7 + k) % partitions);
            call += 1;
            let payloads = take(&mut cursor, batch);
            let messages = if packed {
                GroupMessages::Packed {
                    count: batch as u32,
                    zstd: pack(&payloads),
                }
            } else {
                GroupMessages::Items(
                    payloads
                        .into_iter()
                        .map(|p| PushItem {
                            transaction_id: None,
                            payload: p.as_bytes().to_vec(),
                        })
                        .collect(),
                )
            };
            let body = encode_push_body(
                &[PushGroup {
                    queue: queue.clone(),
                    partition,
                    messages,
                }],
                true,
            )
            .unwrap();
            c.execute("SELECT queen.push_binary($1)", &[&body]);
            batch as u64
        }
    })
}

/// `payloads` as one segment blob, as the engine or a client packing its own
/// frames stores it: each message under a new id, whose text is its
/// transaction id.
fn pack(payloads: &[&str]) -> Vec<u8> {
    let ids: Vec<[u8; 16]> = payloads
        .iter()
        .map(|_| queen_frames::new_message_id())
        .collect();
    let txns: Vec<String> = ids.iter().map(queen_frames::id_text).collect();
    let frames: Vec<queen_frames::FrameRef> = payloads
        .iter()
        .zip(&ids)
        .zip(&txns)
        .map(|((p, id), t)| queen_frames::FrameRef {
            flags: 0,
            message_id: *id,
            trace_id: None,
            transaction_id: t,
            producer: None,
            payload: p.as_bytes(),
        })
        .collect();
    queen_frames::segment::encode_segment(frames.iter()).unwrap()
}

fn pgmq_push(b: &Bench, queue: &str, batch: usize) -> (u64, f64) {
    let queue = queue.to_owned();
    b.run(move |k| {
        let queue = queue.clone();
        let mut cursor = k * 1000;
        move |c: &mut Conn| {
            let msgs = take(&mut cursor, batch);
            c.execute(
                "SELECT pgmq.send_batch($1, $2::text[]::jsonb[])",
                &[&queue, &msgs],
            );
            batch as u64
        }
    })
}

/// The same compressed bytes a queen segment would hold, one INSERT per call;
/// the blobs are encoded before the clock starts, so this is the insert alone.
fn ceiling_push(b: &Bench, batch: usize) -> (u64, f64) {
    let mut cursor = 0usize;
    let blobs: std::sync::Arc<Vec<Vec<u8>>> =
        std::sync::Arc::new((0..64).map(|_| pack(&take(&mut cursor, batch))).collect());
    b.run(move |k| {
        let blobs = std::sync::Arc::clone(&blobs);
        let mut call = k;
        move |c: &mut Conn| {
            let blob = &blobs[call % blobs.len()];
            call += 1;
            c.execute("INSERT INTO bench_ceiling (blob) VALUES ($1)", &[blob]);
            batch as u64
        }
    })
}

/// A consumer's view of a pop answer: what it acks by, and each message's
/// data still as JSON text (a consumer hands it on to its own types).
#[derive(serde::Deserialize)]
struct Popped<'a> {
    #[serde(borrow, default)]
    messages: Vec<PoppedMessage<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct PoppedMessage<'a> {
    transaction_id: &'a str,
    partition_id: &'a str,
    lease_id: Option<&'a str>,
    #[serde(borrow)]
    data: &'a serde_json::value::RawValue,
}

/// The ack body a consumer sends for what it read: (transaction id,
/// partition id, lease id) of each message, all completed.
fn ack_body<'a, P: std::fmt::Display>(read: impl Iterator<Item = (&'a str, P, &'a str)>) -> String {
    let mut acks = String::from("[");
    for (i, (txn, pid, lease)) in read.enumerate() {
        if i > 0 {
            acks.push(',');
        }
        let txn = serde_json::to_string(txn).unwrap();
        acks.push_str(&format!(
            "{{\"transactionId\":{txn},\"partitionId\":\"{pid}\",\"leaseId\":\"{lease}\"}}"
        ));
    }
    acks.push(']');
    acks
}

fn queen_pop_ack(b: &Bench, queue: &str, batch: i32) -> (u64, f64) {
    let queue = queue.to_owned();
    b.run(move |_| {
        let queue = queue.clone();
        move |c: &mut Conn| {
            // The answer read as json, as pgmq's messages are read below.
            let row = c.query_one(
                "SELECT queen.pop($1, NULL, NULL, $2, '{}')",
                &[&queue, &batch],
            );
            let postgres::types::Json(popped): postgres::types::Json<Popped> = row.get(0);
            if popped.messages.is_empty() {
                return 0;
            }
            std::hint::black_box(
                popped
                    .messages
                    .iter()
                    .map(|m| m.data.get().len())
                    .sum::<usize>(),
            );
            let acks = ack_body(popped.messages.iter().map(|m| {
                (
                    m.transaction_id,
                    m.partition_id,
                    m.lease_id.unwrap_or_default(),
                )
            }));
            c.execute("SELECT queen.ack_text($1)", &[&acks]);
            popped.messages.len() as u64
        }
    })
}

/// The same consumer reading framed pops (QPF1, as queen-mq's frames
/// consumer does): the stored segments come as they are and the client
/// decompresses them and reads each frame's transaction id and payload.
fn queen_pop_frames_ack(b: &Bench, queue: &str, batch: i32) -> (u64, f64) {
    use queen_frames::frame::FrameIter;
    use queen_frames::pop_body::{decode_pop_answer, CODEC_RAW};
    let queue = queue.to_owned();
    b.run(move |_| {
        let queue = queue.clone();
        move |c: &mut Conn| {
            let row = c.query_one(
                "SELECT queen.pop_frames($1, NULL, NULL, $2, '{}')",
                &[&queue, &batch],
            );
            let body: &[u8] = row.get(0);
            let answer = decode_pop_answer(body).expect("pop answer");
            let mut read: Vec<(String, u64)> = Vec::with_capacity(batch as usize);
            let mut bytes = 0usize;
            for claim in &answer.claims {
                for rec in &claim.records {
                    let raw = if rec.codec == CODEC_RAW {
                        rec.bytes.clone()
                    } else {
                        queen_frames::decompress_segment(
                            &rec.bytes,
                            queen_frames::MAX_SEGMENT_RAW_BYTES,
                        )
                        .expect("segment")
                    };
                    for (i, frame) in FrameIter::new(&raw, rec.count).enumerate() {
                        let frame = frame.expect("frame");
                        let offset = rec.base_offset + i as u64;
                        if (claim.start..=claim.end).contains(&offset) {
                            bytes += std::str::from_utf8(frame.payload)
                                .expect("payload text")
                                .len();
                            read.push((frame.transaction_id.to_owned(), claim.partition_id));
                        }
                    }
                }
            }
            if read.is_empty() {
                return 0;
            }
            std::hint::black_box(bytes);
            let acks = ack_body(
                read.iter()
                    .map(|(txn, pid)| (txn.as_str(), pid, answer.lease_id.as_str())),
            );
            c.execute("SELECT queen.ack_text($1)", &[&acks]);
            read.len() as u64
        }
    })
}

/// `relaxed`: the consumer's session commits without waiting for the WAL
/// flush (`synchronous_commit = off`), the durability queen's pop and ack
/// commits have by default.
fn pgmq_pop_ack(b: &Bench, queue: &str, batch: i32, relaxed: bool) -> (u64, f64) {
    let queue = queue.to_owned();
    b.run(move |_| {
        let queue = queue.clone();
        let mut set_up = !relaxed;
        move |c: &mut Conn| {
            if !set_up {
                c.client
                    .batch_execute("SET synchronous_commit = off")
                    .unwrap();
                set_up = true;
            }
            // The messages themselves, as a consumer reads them (queen's pop
            // answers them too), still as JSON text.
            let rows = c.query(
                "SELECT msg_id, message FROM pgmq.read($1, 30, $2)",
                &[&queue, &batch],
            );
            let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
            let messages: Vec<postgres::types::Json<Box<serde_json::value::RawValue>>> =
                rows.iter().map(|r| r.get(1)).collect();
            std::hint::black_box(messages.iter().map(|m| m.0.get().len()).sum::<usize>());
            if ids.is_empty() {
                return 0;
            }
            c.execute("SELECT pgmq.delete($1, $2::bigint[])", &[&queue, &ids]);
            ids.len() as u64
        }
    })
}

fn scalar(c: &mut Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).unwrap().get(0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dsn = args
        .next()
        .unwrap_or_else(|| "host=127.0.0.1 port=6534 user=postgres dbname=queen".into());
    let secs: f64 = args
        .next()
        .map(|s| s.parse().expect("seconds"))
        .unwrap_or(5.0);
    let conns = thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let b = Bench {
        dsn: dsn.clone(),
        secs,
        conns,
    };

    // pgmq from the crate's embedded install SQL, in the same database.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(&format!(
                "postgres:///queen?host=127.0.0.1&port={}&user=postgres",
                port_of(&dsn)
            ))
            .await
            .expect("sqlx connect");
        pgmq::install::install_sql_from_embedded(&pool)
            .await
            .expect("pgmq install");
    });
    let mut c = b.connect();
    c.batch_execute("DROP TABLE IF EXISTS bench_ceiling; CREATE TABLE bench_ceiling (id bigserial PRIMARY KEY, blob bytea); ALTER TABLE bench_ceiling ALTER COLUMN blob SET STORAGE EXTERNAL;").unwrap();
    for batch in [1, 100, 1000] {
        for q in [format!("bench_push_{batch}"), format!("bench_pop_{batch}")] {
            let _ = c.execute("SELECT pgmq.drop_queue($1)", &[&q]);
            c.execute("SELECT pgmq.create($1)", &[&q]).unwrap();
        }
    }
    c.batch_execute("SELECT queen.delete_queue(name) FROM queen.queues WHERE name LIKE 'bench%'")
        .unwrap();

    // QUEEN_BENCH_ONLY=push or pop runs one half; pop:100 one pop batch.
    let only = std::env::var("QUEEN_BENCH_ONLY").unwrap_or_default();
    println!("queen bench: {conns} connections, {secs} s per cell, ~256 B JSON payloads\n");
    if !only.starts_with("pop") {
        push_cells(&b, &mut c);
    }
    if !only.starts_with("push") {
        let batches: Vec<i32> = match only.strip_prefix("pop:") {
            Some(b) => vec![b.parse().expect("QUEEN_BENCH_ONLY=pop:<batch>")],
            None => vec![1, 100],
        };
        pop_cells(&b, &mut c, &batches);
    }
    println!("\ntargets: push b100 >= 3x pgmq, b1000 >= 5x, push >= 0.7x ceiling, pop+ack b100 >= 3x pgmq, disk <= 0.3x pgmq");
}

fn push_cells(b: &Bench, c: &mut Client) {
    println!(
        "{:<26} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8}",
        "push",
        "queen json",
        "queen bin",
        "packed",
        "pgmq",
        "ceiling",
        "json/pg",
        "bin/pg",
        "pack/pg",
        "json/ceil",
        "bin/ceil",
        "pack/ceil"
    );
    for batch in [1usize, 100, 1000] {
        let pgmq_q = format!("bench_push_{batch}");
        let json_q = |p: usize| format!("bench_push_{batch}_{p}");
        let bin_q = |p: usize| format!("bench_bin_{batch}_{p}");
        let packed_q = |p: usize| format!("bench_packed_{batch}_{p}");
        let cells: Vec<Cell<'_>> = vec![
            Box::new(|b| ceiling_push(b, batch)),
            Box::new(|b| pgmq_push(b, &pgmq_q, batch)),
            Box::new(|b| queen_push(b, &json_q(1), batch, 1, false)),
            Box::new(|b| queen_push_binary(b, &bin_q(1), batch, 1, false)),
            Box::new(|b| queen_push_binary(b, &packed_q(1), batch, 1, true)),
            Box::new(|b| queen_push(b, &json_q(16), batch, 16, false)),
            Box::new(|b| queen_push_binary(b, &bin_q(16), batch, 16, false)),
            Box::new(|b| queen_push_binary(b, &packed_q(16), batch, 16, true)),
        ];
        let rates = interleave(b, &cells);
        let (ceiling, pgmq) = (rates[0], rates[1]);
        for (k, partitions) in [1usize, 16].into_iter().enumerate() {
            let (queen, binary, packed) = (rates[2 + 3 * k], rates[3 + 3 * k], rates[4 + 3 * k]);
            println!(
                "{:<26} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>7.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>8.2}",
                format!("batch {batch}, {partitions} partition(s)"),
                queen,
                binary,
                packed,
                pgmq,
                ceiling,
                queen / pgmq,
                binary / pgmq,
                packed / pgmq,
                queen / ceiling,
                binary / ceiling,
                packed / ceiling
            );
        }
    }

    // Disk per message, from what the push cells wrote.
    c.batch_execute("VACUUM ANALYZE").unwrap();
    let queen_msgs = scalar(
        c,
        "SELECT COALESCE(sum(frame_count), 0)::int8 FROM queen.log_segments",
    );
    let queen_bytes = scalar(
        c,
        "SELECT (pg_total_relation_size('queen.log_segments') + pg_total_relation_size('queen.log_txns'))::int8",
    );
    let mut pgmq_msgs = 0i64;
    let mut pgmq_bytes = 0i64;
    for batch in [1, 100, 1000] {
        pgmq_msgs += scalar(
            c,
            &format!("SELECT count(*) FROM pgmq.q_bench_push_{batch}"),
        );
        pgmq_bytes += scalar(
            c,
            &format!("SELECT pg_total_relation_size('pgmq.q_bench_push_{batch}')::int8"),
        );
    }
    let queen_per = queen_bytes as f64 / queen_msgs.max(1) as f64;
    let pgmq_per = pgmq_bytes as f64 / pgmq_msgs.max(1) as f64;
    println!(
        "\ndisk per message: queen {queen_per:.0} B, pgmq {pgmq_per:.0} B, ratio {:.2}",
        queen_per / pgmq_per
    );

    // Transaction ids of the caller's own are checked against the dedup
    // window on every push (after the disk figure: their index is extra).
    let cells: Vec<Cell<'_>> = vec![
        Box::new(|b| queen_push(b, "bench_ids_100", 100, 16, true)),
        Box::new(|b| queen_push(b, "bench_noids_100", 100, 16, false)),
        Box::new(|b| pgmq_push(b, "bench_push_100", 100)),
    ];
    let rates = interleave(b, &cells);
    println!(
        "\npush with transaction ids, batch 100, 16 partitions: {:.0} msgs/s, {:.2}x the same push without ids ({:.0}), {:.2}x pgmq ({:.0})",
        rates[0],
        rates[0] / rates[1],
        rates[1],
        rates[0] / rates[2],
        rates[2]
    );
}

fn pop_cells(b: &Bench, c: &mut Client, batches: &[i32]) {
    // Pop + ack from a prefilled backlog (16 partitions so every connection
    // has a partition to lease), sized so that no side drains it within the
    // cell: a contender that runs dry spends the rest of its time on empty
    // pops, and its figure says less than it can do. queen's two consumers
    // (JSON answers and framed answers) share one queue.
    println!(
        "\n{:<28} {:>12} {:>12} {:>12} {:>9} {:>9}",
        "pop+ack msg/s", "queen json", "queen frames", "pgmq", "json/pg", "frames/pg"
    );
    for &batch in batches {
        // The most messages per second one side may take, with room to spare.
        const MOST_PGMQ_MSGS_PER_SEC: f64 = 150_000.0;
        const MOST_QUEEN_MSGS_PER_SEC: f64 = 400_000.0;
        let sized = |rate: f64| ((b.secs * rate) as usize).max(600_000) / 1000 * 1000;
        let (queen_backlog, pgmq_backlog) = if batch == 1 {
            (60_000, 40_000)
        } else {
            (
                sized(MOST_QUEEN_MSGS_PER_SEC),
                sized(MOST_PGMQ_MSGS_PER_SEC),
            )
        };
        let qname = format!("bench_pop_{batch}");
        let mut rng = SmallRng::seed_from_u64(7);
        let mut left = queen_backlog.max(pgmq_backlog);
        while left > 0 {
            let n = left.min(1000);
            let msgs = batch_of(&mut rng, n);
            if left <= queen_backlog {
                let items: Vec<Value> = msgs
                    .iter()
                    .enumerate()
                    .map(|(i, p)| json!({"queue": qname, "partition": format!("p{}", (left + i) % 16), "payload": p}))
                    .collect();
                c.execute("SELECT queen.push($1)", &[&Value::Array(items)])
                    .unwrap();
            }
            if left <= pgmq_backlog {
                c.execute("SELECT pgmq.send_batch($1, $2::jsonb[])", &[&qname, &msgs])
                    .unwrap();
            }
            left -= n;
        }
        // A checkpoint now rather than one falling inside the cells.
        c.batch_execute("VACUUM ANALYZE").unwrap();
        c.batch_execute("CHECKPOINT").unwrap();
        let cells: Vec<Cell<'_>> = vec![
            Box::new(|b| queen_pop_ack(b, &qname, batch)),
            Box::new(|b| queen_pop_frames_ack(b, &qname, batch)),
            Box::new(|b| pgmq_pop_ack(b, &qname, batch, false)),
            Box::new(|b| pgmq_pop_ack(b, &qname, batch, true)),
        ];
        let rates = interleave(b, &cells);
        let (json, frames, pgmq, pgmq_relaxed) = (rates[0], rates[1], rates[2], rates[3]);
        println!(
            "{:<28} {:>12.0} {:>12.0} {:>12.0} {:>9.2} {:>9.2}",
            format!("batch {batch}"),
            json,
            frames,
            pgmq,
            json / pgmq,
            frames / pgmq
        );
        println!(
            "{:<28} {:>38.0} {:>9.2} {:>9.2}",
            "  pgmq, commits not flushed",
            pgmq_relaxed,
            json / pgmq_relaxed,
            frames / pgmq_relaxed
        );
        let queen_left: i64 = c
            .query_one(
                "SELECT COALESCE(sum(p.last_offset - GREATEST(COALESCE(lc.committed, -1), p.log_start - 1)), 0)::int8
                   FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                   LEFT JOIN queen.log_consumers lc ON lc.partition_id = p.id AND lc.consumer_group = '__QUEUE_MODE__'
                  WHERE q.name = $1",
                &[&qname],
            )
            .unwrap()
            .get(0);
        let pgmq_left = scalar(c, &format!("SELECT count(*) FROM pgmq.q_{qname}"));
        println!(
            "{:<28} {:>25} {:>12}",
            "  left of the backlog", queen_left, pgmq_left
        );
        if queen_left == 0 || pgmq_left == 0 {
            println!("  a backlog ran dry: that side's figure is a lower bound");
        }
    }
}

fn port_of(dsn: &str) -> String {
    dsn.split_whitespace()
        .find_map(|kv| kv.strip_prefix("port="))
        .unwrap_or("5432")
        .to_owned()
}
