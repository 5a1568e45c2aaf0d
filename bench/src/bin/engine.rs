//! Push and pop+ack throughput of queen, pgmq and the physical ceiling (a
//! plain INSERT of the same compressed bytes), measured side by side in one
//! run on one cluster, printed as figures and ratios.
//!
//! Usage: queen_bench_engine <dsn> [seconds per cell] [base dsn]
//!
//! With a base DSN (a cluster holding a previous version of queen), the
//! cells both versions run are measured on each in turns instead
//! ([`versus`]).

use std::thread;

use postgres::Client;
use queen_bench::connect::{connect, dsn_or_default, scalar, Conn};
use queen_bench::payload::{ack_body, order_events, push_item, take, Popped};
use queen_bench::rounds::{self, interleave, Cell};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde_json::{json, Value};

/// Where the bench runs: its cluster, the length of each cell and the
/// connections every contender runs on.
struct Bench {
    dsn: String,
    secs: f64,
    conns: usize,
}

impl Bench {
    /// Runs a worker `make` makes for each of `conns` connections, for
    /// `secs` ([`rounds::run`]); a worker answers the messages one call
    /// handled. Answers the messages handled and the seconds it took.
    fn run<F>(&self, secs: f64, make: impl Fn(usize) -> F) -> (u64, f64)
    where
        F: FnMut(&mut Conn) -> u64 + Send,
    {
        // Connected before the clock starts: a client keeps its connections.
        let workers: Vec<_> = (0..self.conns)
            .map(|k| {
                let mut c = Conn::new(&self.dsn);
                let mut work = make(k);
                move || work(&mut c)
            })
            .collect();
        rounds::run(workers, secs)
    }
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

/// Queen's pushes of `batch` pooled payloads a call, each connection's calls
/// going to the `partitions` partitions in turn; `send` sends one call's
/// payloads to its partition.
fn queen_push_run(
    b: &Bench,
    secs: f64,
    batch: usize,
    partitions: usize,
    send: impl Fn(&mut Conn, String, Vec<&'static str>) + Sync,
) -> (u64, f64) {
    b.run(secs, |k| {
        let mut cursor = k * 1000;
        let mut call = 0usize;
        let send = &send;
        move |c: &mut Conn| {
            let partition = format!("p{}", (call * 7 + k) % partitions);
            call += 1;
            send(c, partition, take(&mut cursor, batch));
            batch as u64
        }
    })
}

/// `with_ids`: every item carries its own transaction id, which the push
/// checks against the queue's dedup window.
fn queen_push(
    b: &Bench,
    secs: f64,
    queue: &str,
    batch: usize,
    partitions: usize,
    with_ids: bool,
) -> (u64, f64) {
    queen_push_run(b, secs, batch, partitions, |c, partition, payloads| {
        // JSON text, as a client holding JSON sends it: parsed once, by queen.
        let mut text = String::with_capacity(batch * 320);
        text.push('[');
        for (i, p) in payloads.into_iter().enumerate() {
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
    })
}

/// The same messages as a binary push body (QPB1, counts-only answer).
/// `packed`: framed and compressed by the client, as queen-mq's binary push
/// with compression sends them (flag 8): the client mints each message id,
/// frames the messages and compresses them, inside the clock; the engine
/// checks the frames and keeps the bytes as they are.
fn queen_push_binary(
    b: &Bench,
    secs: f64,
    queue: &str,
    batch: usize,
    partitions: usize,
    packed: bool,
) -> (u64, f64) {
    use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup, PushItem};
    queen_push_run(b, secs, batch, partitions, |c, partition, payloads| {
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
                queue: queue.to_owned(),
                partition,
                messages,
            }],
            true,
        )
        .unwrap();
        c.execute("SELECT queen.push_binary($1)", &[&body]);
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

fn pgmq_push(b: &Bench, secs: f64, queue: &str, batch: usize) -> (u64, f64) {
    b.run(secs, |k| {
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
fn ceiling_push(b: &Bench, secs: f64, batch: usize) -> (u64, f64) {
    let mut cursor = 0usize;
    let blobs: Vec<Vec<u8>> = (0..64).map(|_| pack(&take(&mut cursor, batch))).collect();
    b.run(secs, |k| {
        let blobs = &blobs;
        let mut call = k;
        move |c: &mut Conn| {
            let blob = &blobs[call % blobs.len()];
            call += 1;
            c.execute("INSERT INTO bench_ceiling (blob) VALUES ($1)", &[blob]);
            batch as u64
        }
    })
}

fn queen_pop_ack(b: &Bench, secs: f64, queue: &str, batch: i32) -> (u64, f64) {
    b.run(secs, |_| {
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
            std::hint::black_box(popped.data_len());
            c.execute("SELECT queen.ack_text($1)", &[&popped.acks()]);
            popped.messages.len() as u64
        }
    })
}

/// The same consumer reading framed pops (QPF1, as queen-mq's frames
/// consumer does): the stored segments come as they are and the client
/// decompresses them and reads each frame's transaction id and payload.
fn queen_pop_frames_ack(b: &Bench, secs: f64, queue: &str, batch: i32) -> (u64, f64) {
    use queen_frames::frame::FrameIter;
    use queen_frames::pop_body::{decode_pop_answer, CODEC_RAW};
    b.run(secs, |_| {
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
fn pgmq_pop_ack(b: &Bench, secs: f64, queue: &str, batch: i32, relaxed: bool) -> (u64, f64) {
    b.run(secs, |_| {
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

fn main() {
    let mut args = std::env::args().skip(1);
    let dsn = dsn_or_default(args.next());
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

    if let Some(base_dsn) = args.next() {
        let base = Bench {
            dsn: base_dsn,
            secs,
            conns,
        };
        versus(&b, &base);
        return;
    }
    queen_bench::cluster::install_pgmq(&dsn);
    let mut c = connect(&b.dsn);
    c.batch_execute(
        "DROP TABLE IF EXISTS bench_ceiling;
         CREATE TABLE bench_ceiling (id bigserial PRIMARY KEY, blob bytea);
         ALTER TABLE bench_ceiling ALTER COLUMN blob SET STORAGE EXTERNAL;",
    )
    .unwrap();
    for batch in [1, 100, 1000] {
        for q in [format!("bench_push_{batch}"), format!("bench_pop_{batch}")] {
            let _ = c.execute("SELECT pgmq.drop_queue($1)", &[&q]);
            c.execute("SELECT pgmq.create($1)", &[&q]).unwrap();
        }
    }
    c.batch_execute("SELECT queen.queue_delete(name) FROM queen.queues WHERE name LIKE 'bench%'")
        .unwrap();

    // QUEEN_BENCH_ONLY=push or pop runs one half; pop:100 one pop batch;
    // wide the wide queues' push and pop cells alone.
    let only = std::env::var("QUEEN_BENCH_ONLY").unwrap_or_default();
    println!("queen bench: {conns} connections, {secs} s per cell, ~256 B JSON payloads\n");
    if only == "wide" {
        wide_queue_cell(&b, &mut c);
        wide_pop_cell(&b, &mut c);
        return;
    }
    if !only.starts_with("pop") {
        push_cells(&b, &mut c);
    }
    if !only.starts_with("push") {
        let batches: Vec<i32> = match only.strip_prefix("pop:") {
            Some(b) => vec![b.parse().expect("QUEEN_BENCH_ONLY=pop:<batch>")],
            None => vec![1, 100],
        };
        pop_cells(&b, &mut c, &batches);
        if !only.starts_with("pop:") {
            wide_pop_cell(&b, &mut c);
        }
    }
    println!(
        "\ntargets: push b100 >= 3x pgmq, b1000 >= 5x, push >= 0.7x ceiling, \
         pop+ack b100 >= 3x pgmq, disk <= 0.3x pgmq"
    );
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
            Box::new(|s| ceiling_push(b, s, batch)),
            Box::new(|s| pgmq_push(b, s, &pgmq_q, batch)),
            Box::new(|s| queen_push(b, s, &json_q(1), batch, 1, false)),
            Box::new(|s| queen_push_binary(b, s, &bin_q(1), batch, 1, false)),
            Box::new(|s| queen_push_binary(b, s, &packed_q(1), batch, 1, true)),
            Box::new(|s| queen_push(b, s, &json_q(16), batch, 16, false)),
            Box::new(|s| queen_push_binary(b, s, &bin_q(16), batch, 16, false)),
            Box::new(|s| queen_push_binary(b, s, &packed_q(16), batch, 16, true)),
        ];
        let rates = interleave(b.secs, &cells);
        let (ceiling, pgmq) = (rates[0], rates[1]);
        for (k, partitions) in [1usize, 16].into_iter().enumerate() {
            let (queen, binary, packed) = (rates[2 + 3 * k], rates[3 + 3 * k], rates[4 + 3 * k]);
            println!(
                "{:<26} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0} \
                 {:>7.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>8.2}",
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
        "SELECT (pg_total_relation_size('queen.log_segments')
                 + pg_total_relation_size('queen.log_txns'))::int8",
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
        Box::new(|s| queen_push(b, s, "bench_ids_100", 100, 16, true)),
        Box::new(|s| queen_push(b, s, "bench_noids_100", 100, 16, false)),
        Box::new(|s| pgmq_push(b, s, "bench_push_100", 100)),
    ];
    let rates = interleave(b.secs, &cells);
    println!(
        "\npush with transaction ids, batch 100, 16 partitions: {:.0} msgs/s, \
         {:.2}x the same push without ids ({:.0}), {:.2}x pgmq ({:.0})",
        rates[0],
        rates[0] / rates[1],
        rates[1],
        rates[0] / rates[2],
        rates[2]
    );
    wide_queue_cell(b, c);
}

/// Partitions a wide queue holds beside the ones its pushes write to.
const WIDE_IDLE_PARTITIONS: usize = 10_000;

/// Pushes of 16 groups of 10 messages a call, connection `k`'s groups to
/// its own partitions `p{16k}` .. `p{16k+15}` of `queue`.
fn queen_push_groups(b: &Bench, secs: f64, queue: &str) -> (u64, f64) {
    b.run(secs, |k| {
        let mut cursor = k * 1000;
        move |c: &mut Conn| {
            let payloads = take(&mut cursor, 160);
            let mut text = String::with_capacity(160 * 320);
            text.push('[');
            for (i, p) in payloads.into_iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                let partition = format!("p{}", k * 16 + i / 10);
                text.push_str(&format!(
                    "{{\"queue\":\"{queue}\",\"partition\":\"{partition}\",\"payload\":{p}}}"
                ));
            }
            text.push(']');
            c.execute("SELECT queen.push_text($1)", &[&text]);
            160
        }
    })
}

/// A push spanning 16 partitions, into a queue of only those partitions
/// and into one that also holds [`WIDE_IDLE_PARTITIONS`] others: what a
/// push costs must not grow with the partitions it does not write.
fn wide_queue_cell(b: &Bench, c: &mut Client) {
    let written: Vec<String> = (0..16 * b.conns).map(|p| format!("p{p}")).collect();
    let idle: Vec<String> = (0..WIDE_IDLE_PARTITIONS)
        .map(|p| format!("idle-{p}"))
        .collect();
    fill(c, "bench_narrow", &written, 1);
    fill(c, "bench_wide", &written, 1);
    fill(c, "bench_wide", &idle, 1);
    c.batch_execute("ANALYZE queen.log_partitions").unwrap();
    let cells: Vec<Cell<'_>> = vec![
        Box::new(|s| queen_push_groups(b, s, "bench_narrow")),
        Box::new(|s| queen_push_groups(b, s, "bench_wide")),
    ];
    let rates = interleave(b.secs, &cells);
    println!(
        "
push of 16 partitions x 10 messages: queue of 16 per connection {:.0} msgs/s, \
         queue of {WIDE_IDLE_PARTITIONS} more {:.0} msgs/s; wide/narrow {:.2}",
        rates[0],
        rates[1],
        rates[1] / rates[0]
    );
}

/// Pops of one message with autoAck for consumer group `group` from `queue`.
fn queen_pop_auto(b: &Bench, secs: f64, queue: &str, group: &str) -> (u64, f64) {
    queen_pop_auto_in(b, secs, Some(queue), json!({"autoAck": true}), group)
}

/// Pops of one message with autoAck for consumer group `group` from the
/// queues of `namespace`.
fn queen_pop_auto_namespace(b: &Bench, secs: f64, namespace: &str, group: &str) -> (u64, f64) {
    let options = json!({"autoAck": true, "namespace": namespace});
    queen_pop_auto_in(b, secs, None, options, group)
}

/// Pops of one message with `options` for consumer group `group` from
/// `queue`, or from the queues `options` name.
fn queen_pop_auto_in(
    b: &Bench,
    secs: f64,
    queue: Option<&str>,
    options: Value,
    group: &str,
) -> (u64, f64) {
    b.run(secs, |_| {
        let options = options.clone();
        move |c: &mut Conn| {
            let row = c.query_one(
                "SELECT queen.pop($1, NULL, $2, 1, $3)",
                &[&queue, &group, &options],
            );
            let postgres::types::Json(popped): postgres::types::Json<Popped> = row.get(0);
            popped.messages.len() as u64
        }
    })
}

/// Pushes `per` messages to each of the partitions `names` of `queue`,
/// 1 000 a call.
fn fill(c: &mut Client, queue: &str, names: &[String], per: usize) {
    let items: Vec<String> = (0..per)
        .flat_map(|k| {
            names
                .iter()
                .map(move |p| push_item(queue, Some(p), Value::from(k as i64)).to_string())
        })
        .collect();
    for chunk in items.chunks(1000) {
        c.execute(
            "SELECT queen.push_text($1)",
            &[&format!("[{}]", chunk.join(","))],
        )
        .unwrap();
    }
}

/// Pops from a queue of 16 partitions, from one of [`WIDE_IDLE_PARTITIONS`]
/// partitions that all hold messages, and from one of as many where only 16
/// hold messages the group has not read, popped by its name and, a copy of
/// it, by its namespace. A pop's candidate scan reads the partitions until
/// it has found its candidates: the first two should pop alike; the sparse
/// ones read the whole queue when a scan finds none, and try what that read
/// found in the next pops.
fn wide_pop_cell(b: &Bench, c: &mut Client) {
    wide_pop_fill(c);
    let cells: Vec<Cell<'_>> = vec![
        Box::new(|s| queen_pop_auto(b, s, "bench_pop_narrow", WIDE_POP_GROUP)),
        Box::new(|s| queen_pop_auto(b, s, "bench_pop_wide", WIDE_POP_GROUP)),
        Box::new(|s| queen_pop_auto(b, s, "bench_pop_sparse", WIDE_POP_GROUP)),
        Box::new(|s| queen_pop_auto_namespace(b, s, "bench_sparse", WIDE_POP_GROUP)),
    ];
    let rates = interleave(b.secs, &cells);
    println!(
        "pop of 1 (autoAck, a consumer group): queue of 16 partitions {:.0} msgs/s, \
         {WIDE_IDLE_PARTITIONS} partitions all holding messages {:.0} msgs/s ({:.2}), \
         {WIDE_IDLE_PARTITIONS} partitions of which 16 hold messages {:.0} msgs/s ({:.2}), \
         the same popped by its namespace {:.0} msgs/s ({:.2})",
        rates[0],
        rates[1],
        rates[1] / rates[0],
        rates[2],
        rates[2] / rates[0],
        rates[3],
        rates[3] / rates[0]
    );
}

/// The consumer group of the wide pop cells.
const WIDE_POP_GROUP: &str = "bench";

/// The queues of [`wide_pop_cell`]: `bench_pop_narrow`, `bench_pop_wide`,
/// `bench_pop_sparse` and its copy in namespace `bench_sparse`.
fn wide_pop_fill(c: &mut Client) {
    const GROUP: &str = WIDE_POP_GROUP;
    let busy: Vec<String> = (0..16).map(|p| format!("p{p}")).collect();
    let every: Vec<String> = (0..WIDE_IDLE_PARTITIONS).map(|p| format!("p{p}")).collect();
    fill(c, "bench_pop_narrow", &busy, 2_500);
    fill(c, "bench_pop_wide", &every, 4);
    // The sparse queue twice: one popped by its name, one by its namespace.
    c.execute(
        "SELECT queen.configure('bench_pop_sparse_ns', '{\"namespace\": \"bench_sparse\"}')",
        &[],
    )
    .unwrap();
    for queue in ["bench_pop_sparse", "bench_pop_sparse_ns"] {
        fill(c, queue, &every, 1);
        c.execute(
            "SELECT queen.consumer_group_seek($1, $2, '{\"toEnd\": true}')",
            &[&GROUP, &queue],
        )
        .unwrap();
        fill(c, queue, &busy, 2_500);
    }
    c.batch_execute("VACUUM ANALYZE").unwrap();
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
        let (queen_backlog, pgmq_backlog) = backlogs(b.secs, batch);
        let qname = format!("bench_pop_{batch}");
        fill_backlog(c, &qname, queen_backlog, Some(pgmq_backlog));
        let cells: Vec<Cell<'_>> = vec![
            Box::new(|s| queen_pop_ack(b, s, &qname, batch)),
            Box::new(|s| queen_pop_frames_ack(b, s, &qname, batch)),
            Box::new(|s| pgmq_pop_ack(b, s, &qname, batch, false)),
            Box::new(|s| pgmq_pop_ack(b, s, &qname, batch, true)),
        ];
        let rates = interleave(b.secs, &cells);
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
                "SELECT COALESCE(sum(COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1)
                         - GREATEST(COALESCE(lc.committed, -1), p.log_start - 1)), 0)::int8
                   FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                   LEFT JOIN queen.log_consumers lc
                          ON lc.partition_id = p.id AND lc.consumer_group = '__QUEUE_MODE__'
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

/// The backlogs of queen and pgmq a pop+ack cell of `batch` over `secs`
/// does not drain.
fn backlogs(secs: f64, batch: i32) -> (usize, usize) {
    // The most messages per second one side may take, with room to spare.
    const MOST_PGMQ_MSGS_PER_SEC: f64 = 150_000.0;
    const MOST_QUEEN_MSGS_PER_SEC: f64 = 400_000.0;
    let sized = |rate: f64| ((secs * rate) as usize).max(600_000) / 1000 * 1000;
    if batch == 1 {
        (60_000, 40_000)
    } else {
        (
            sized(MOST_QUEEN_MSGS_PER_SEC),
            sized(MOST_PGMQ_MSGS_PER_SEC),
        )
    }
}

/// Fills queen's queue `qname` (16 partitions) with `queen_backlog` order
/// events and, with `pgmq_backlog`, pgmq's queue of the same name with as
/// many of the same events; then vacuums and checkpoints, so that no
/// checkpoint falls inside the cells.
fn fill_backlog(c: &mut Client, qname: &str, queen_backlog: usize, pgmq_backlog: Option<usize>) {
    let pgmq_backlog = pgmq_backlog.unwrap_or(0);
    let mut rng = SmallRng::seed_from_u64(7);
    let mut left = queen_backlog.max(pgmq_backlog);
    while left > 0 {
        let n = left.min(1000);
        let msgs = order_events(&mut rng, n);
        if left <= queen_backlog {
            let items: Vec<Value> = msgs
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let partition = format!("p{}", (left + i) % 16);
                    push_item(qname, Some(&partition), p.clone())
                })
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
    c.batch_execute("VACUUM ANALYZE").unwrap();
    c.batch_execute("CHECKPOINT").unwrap();
}

/// The cells this version and a previous one (on the cluster of `base`)
/// both run, each measured on both in turns (interleaved rounds), printed
/// with the ratio of this version's figure to the previous one's.
/// `QUEEN_BENCH_ONLY=push` or `pop` runs one half.
fn versus(b: &Bench, base: &Bench) {
    let only = std::env::var("QUEEN_BENCH_ONLY").unwrap_or_default();
    let mut here = connect(&b.dsn);
    let mut there = connect(&base.dsn);
    println!(
        "queen against a previous version: {} connections, {} s per cell\n",
        b.conns, b.secs
    );
    println!(
        "{:<44} {:>10} {:>10} {:>7}",
        "msgs/s", "this", "previous", "ratio"
    );
    let row = |name: &str, rates: Vec<f64>| {
        println!(
            "{name:<44} {:>10.0} {:>10.0} {:>7.2}",
            rates[0],
            rates[1],
            rates[0] / rates[1]
        );
    };
    let pair = |cell: &dyn Fn(&Bench, f64) -> (u64, f64)| -> Vec<f64> {
        let cells: Vec<Cell<'_>> = vec![Box::new(|s| cell(b, s)), Box::new(|s| cell(base, s))];
        interleave(b.secs, &cells)
    };
    if only != "pop" {
        versus_push(&row, &pair);
    }
    if only != "push" {
        versus_pop(b.secs, &mut here, &mut there, &row, &pair);
    }
}

/// A row of [`versus`]: a cell's name and its rates here and there.
type Row<'a> = dyn Fn(&str, Vec<f64>) + 'a;
/// A cell of [`versus`] run here and there in turns.
type Pair<'a> = dyn Fn(&dyn Fn(&Bench, f64) -> (u64, f64)) -> Vec<f64> + 'a;

fn versus_push(row: &Row<'_>, pair: &Pair<'_>) {
    for (batch, partitions) in [(1usize, 1usize), (1, 16), (100, 1), (100, 16), (1000, 16)] {
        let q = format!("bench_push_{batch}_{partitions}");
        row(
            &format!("push json, batch {batch}, {partitions} partition(s)"),
            pair(&|b, s| queen_push(b, s, &q, batch, partitions, false)),
        );
    }
    row(
        "push binary, batch 1000, 16 partitions",
        pair(&|b, s| queen_push_binary(b, s, "bench_bin_1000_16", 1000, 16, false)),
    );
    row(
        "push packed, batch 1000, 16 partitions",
        pair(&|b, s| queen_push_binary(b, s, "bench_packed_1000_16", 1000, 16, true)),
    );
    row(
        "push with ids, batch 100, 16 partitions",
        pair(&|b, s| queen_push(b, s, "bench_ids_100", 100, 16, true)),
    );
    row(
        "push of 16 partitions x 10",
        pair(&|b, s| queen_push_groups(b, s, "bench_groups")),
    );
}

fn versus_pop(secs: f64, here: &mut Client, there: &mut Client, row: &Row<'_>, pair: &Pair<'_>) {
    for batch in [1, 100] {
        let qname = format!("bench_pop_{batch}");
        let backlog = backlogs(secs, batch).0;
        fill_backlog(here, &qname, backlog, None);
        fill_backlog(there, &qname, backlog, None);
        row(
            &format!("pop+ack json, batch {batch}"),
            pair(&|b, s| queen_pop_ack(b, s, &qname, batch)),
        );
        row(
            &format!("pop+ack frames, batch {batch}"),
            pair(&|b, s| queen_pop_frames_ack(b, s, &qname, batch)),
        );
    }
    wide_pop_fill(here);
    wide_pop_fill(there);
    row(
        "pop of 1, autoAck, queue of 16 partitions",
        pair(&|b, s| queen_pop_auto(b, s, "bench_pop_narrow", WIDE_POP_GROUP)),
    );
    row(
        "pop of 1, autoAck, 16 of 10000 partitions",
        pair(&|b, s| queen_pop_auto(b, s, "bench_pop_sparse", WIDE_POP_GROUP)),
    );
    row(
        "pop of 1, autoAck, the same by namespace",
        pair(&|b, s| queen_pop_auto_namespace(b, s, "bench_sparse", WIDE_POP_GROUP)),
    );
}
