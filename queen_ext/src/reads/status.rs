//! The readers of the status and analytics routes, in the shapes Queen's
//! server answers. Message counts (pending, processing, completed, dead
//! letter) are computed live from the watermarks, cursors and leases;
//! throughput comes from the metrics series. Figures Queen's server has
//! that mean nothing here (its event loop, job queue, free slots, process
//! CPU and memory) are answered 0, as docs/http.md says. The totals over
//! every producer read the extension's own row (`queen_ext`), which counts
//! all the work the front-ends' rows count again; a `workerId` picks one.

use pgrx::spi::{SpiClient, SpiHeapTupleData};
use serde_json::{json, Value};

use crate::catalog::queues;
use crate::maintenance::metrics::params::{
    Params, Range, ANALYTICS_SPAN_US, DEFAULT_SPAN_US, MINUTE_US,
};
use crate::maintenance::metrics::sample::WORKER_ID;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;

/// The most queues a status, overview or refresh reads counts of.
pub const MAX_QUEUES: i64 = 100_000;
/// The most partitions a queue detail lists.
pub const MAX_DETAIL_PARTITIONS: i64 = 1000;
/// The most consumer-group cursors the overview's lag figures read.
pub const MAX_LAG_CURSORS: i64 = 100_000;
/// The most distinct errors the status's dead-letter summary lists.
pub const TOP_ERRORS: i64 = 5;
/// The window the overview's throughput is averaged over (Queen: 5 minutes).
pub const THROUGHPUT_WINDOW_US: i64 = 5 * MINUTE_US;

fn i(r: &SpiHeapTupleData<'_>, name: &str) -> i64 {
    spi::opt::<i64>(r, name).unwrap_or(0)
}

fn f(r: &SpiHeapTupleData<'_>, name: &str) -> Option<f64> {
    spi::opt::<f64>(r, name)
}

fn ratio(n: i64, d: i64) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 / d as f64
    }
}

/// The mean lag of a row's pops, null when it had none.
fn avg_lag(r: &SpiHeapTupleData<'_>) -> Value {
    match i(r, "lag_count") {
        0 => Value::Null,
        n => json!(ratio(i(r, "lag_sum_ms"), n)),
    }
}

fn max_lag(r: &SpiHeapTupleData<'_>) -> Value {
    match i(r, "lag_count") {
        0 => Value::Null,
        _ => json!(i(r, "max_lag_ms")),
    }
}

/// A queue's live counts.
#[derive(Debug, Clone, Default)]
struct Counts {
    total: i64,
    pending: i64,
    processing: i64,
    completed: i64,
    dead_letter: i64,
}

impl Counts {
    fn of(r: &SpiHeapTupleData<'_>) -> Counts {
        Counts {
            total: i(r, "total"),
            pending: i(r, "pending"),
            processing: i(r, "processing"),
            completed: i(r, "completed"),
            dead_letter: i(r, "dead_letter"),
        }
    }
    fn add(&mut self, o: &Counts) {
        self.total += o.total;
        self.pending += o.pending;
        self.processing += o.processing;
        self.completed += o.completed;
        self.dead_letter += o.dead_letter;
    }
    fn json(&self) -> Value {
        json!({
            "total": self.total,
            "pending": self.pending,
            "processing": self.processing,
            "completed": self.completed,
            "deadLetter": self.dead_letter,
        })
    }
    /// With `failed`: the dead letters, as Queen's status counts them.
    fn json_failed(&self, failed: Value) -> Value {
        let mut v = self.json();
        v["failed"] = failed;
        v
    }
}

struct QueueRow {
    id: i64,
    name: String,
    namespace: Option<String>,
    task: Option<String>,
    created_us: i64,
    partitions: i64,
    counts: Counts,
}

fn queue_rows(
    c: &mut SpiClient<'_>,
    queue: Option<&str>,
    namespace: Option<&str>,
    task: Option<&str>,
    limit: i64,
    offset: i64,
) -> Vec<QueueRow> {
    exec(
        c,
        query!("status_queue_counts"),
        &[spi::TEXT, spi::TEXT, spi::TEXT, spi::INT8, spi::INT8],
        &[
            queue.into(),
            namespace.into(),
            task.into(),
            limit.into(),
            offset.into(),
        ],
    )
    .map(|r| QueueRow {
        id: i(&r, "id"),
        name: spi::col(&r, "name"),
        namespace: spi::opt(&r, "namespace"),
        task: spi::opt(&r, "task"),
        created_us: i(&r, "created_us"),
        partitions: i(&r, "partitions"),
        counts: Counts::of(&r),
    })
    .collect()
}

struct Filters {
    queue: Option<String>,
    namespace: Option<String>,
    task: Option<String>,
}

impl Filters {
    fn of(p: &Params) -> Filters {
        Filters {
            queue: p.text("queue"),
            namespace: p.text("namespace"),
            task: p.text("task"),
        }
    }
    fn any(&self) -> bool {
        self.queue.is_some() || self.namespace.is_some() || self.task.is_some()
    }
}

/// One bucket of a throughput series (the worker totals, or a queue's).
struct Point {
    bucket_us: i64,
    push_requests: i64,
    push_messages: i64,
    pop_requests: i64,
    pop_messages: i64,
    pop_empty: i64,
    ack_requests: i64,
    ack_success: i64,
    ack_failed: i64,
    dlq: i64,
    transactions: i64,
    lag_count: i64,
    avg_lag: Value,
    max_lag: Value,
    db_connections: i64,
}

impl Point {
    /// A bucket's row; `db_connections` only the worker series has.
    fn of(r: &SpiHeapTupleData<'_>, with_connections: bool) -> Point {
        Point {
            bucket_us: i(r, "bucket_us"),
            push_requests: i(r, "push_requests"),
            push_messages: i(r, "push_messages"),
            pop_requests: i(r, "pop_requests"),
            pop_messages: i(r, "pop_messages"),
            pop_empty: i(r, "pop_empty"),
            ack_requests: i(r, "ack_requests"),
            ack_success: i(r, "ack_success"),
            ack_failed: i(r, "ack_failed"),
            dlq: i(r, "dlq"),
            transactions: i(r, "transactions"),
            lag_count: i(r, "lag_count"),
            avg_lag: avg_lag(r),
            max_lag: max_lag(r),
            db_connections: if with_connections {
                i(r, "db_connections")
            } else {
                0
            },
        }
    }
}

fn worker_series(
    c: &mut SpiClient<'_>,
    range: &Range,
    bucket: i64,
    host: Option<&str>,
    worker: Option<&str>,
) -> Vec<Point> {
    exec(
        c,
        query!("metrics_worker_series"),
        &[
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
        ],
        &[
            range.from().into(),
            range.to().into(),
            bucket.into(),
            host.into(),
            worker.into(),
        ],
    )
    .map(|r| Point::of(&r, true))
    .collect()
}

/// The queue series summed over the queues matching `f`, one point per
/// bucket, newest first; with the per-queue rows as they came.
fn queue_series(
    c: &mut SpiClient<'_>,
    range: &Range,
    bucket: i64,
    f: &Filters,
) -> Vec<(String, i64, Point)> {
    exec(
        c,
        query!("metrics_queue_series"),
        &[
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
        ],
        &[
            range.from().into(),
            range.to().into(),
            bucket.into(),
            f.queue.as_deref().into(),
            f.namespace.as_deref().into(),
            f.task.as_deref().into(),
        ],
    )
    .map(|r| {
        (
            spi::col::<String>(&r, "queue"),
            i(&r, "partition_count"),
            Point::of(&r, false),
        )
    })
    .collect()
}

/// Sums per-queue points into one per bucket (the input is newest first).
fn per_bucket(rows: Vec<(String, i64, Point)>) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    // Lag sums are not in a Point: keep them aside to recompute the mean.
    let mut sums: Vec<(i64, f64)> = Vec::new();
    for (_, _, p) in rows {
        let lag_sum = p.avg_lag.as_f64().unwrap_or(0.0) * p.lag_count as f64;
        match out.last_mut() {
            Some(last) if last.bucket_us == p.bucket_us => {
                last.push_requests += p.push_requests;
                last.push_messages += p.push_messages;
                last.pop_requests += p.pop_requests;
                last.pop_messages += p.pop_messages;
                last.pop_empty += p.pop_empty;
                last.ack_requests += p.ack_requests;
                last.ack_success += p.ack_success;
                last.ack_failed += p.ack_failed;
                last.dlq += p.dlq;
                last.transactions += p.transactions;
                last.lag_count += p.lag_count;
                if p.max_lag.as_i64() > last.max_lag.as_i64() {
                    last.max_lag = p.max_lag;
                }
                let s = sums.last_mut().unwrap();
                s.0 += p.lag_count;
                s.1 += lag_sum;
            }
            _ => {
                sums.push((p.lag_count, lag_sum));
                out.push(p);
            }
        }
    }
    for (p, (n, s)) in out.iter_mut().zip(sums) {
        p.avg_lag = if n == 0 {
            Value::Null
        } else {
            json!(s / n as f64)
        };
    }
    out
}

fn per_second(n: i64, bucket_minutes: i64) -> f64 {
    n as f64 / (bucket_minutes * 60) as f64
}

/// The database's connection figures per bucket (the newest server's),
/// for the status's pool fields.
fn pool_by_bucket(
    c: &mut SpiClient<'_>,
    range: &Range,
    bucket: i64,
) -> std::collections::HashMap<i64, (i64, i64, i64)> {
    exec(
        c,
        query!("metrics_system_series"),
        &[
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
        ],
        &[
            range.from().into(),
            range.to().into(),
            bucket.into(),
            None::<&str>.into(),
            None::<&str>.into(),
        ],
    )
    .map(|r| {
        (
            i(&r, "bucket_us"),
            (
                f(&r, "active_last").unwrap_or(0.0) as i64,
                f(&r, "idle_last").unwrap_or(0.0) as i64,
                f(&r, "connections_last").unwrap_or(0.0) as i64,
            ),
        )
    })
    .collect()
}

/// `GET /api/v1/status`.
pub fn status(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let f = Filters::of(p);
    let bucket = range.bucket_minutes();
    let points = if f.any() {
        per_bucket(queue_series(c, &range, bucket, &f))
    } else {
        worker_series(c, &range, bucket, None, Some(WORKER_ID))
    };
    let pools = pool_by_bucket(c, &range, bucket);
    let throughput: Vec<Value> = points
        .iter()
        .map(|pt| {
            let (active, idle, size) = pools.get(&pt.bucket_us).copied().unwrap_or((0, 0, 0));
            json!({
                "timestamp": micros_to_iso(pt.bucket_us),
                "ingested": pt.push_messages,
                "processed": pt.ack_success,
                "popMessages": pt.pop_messages,
                "ingestedPerSecond": per_second(pt.push_messages, bucket),
                "processedPerSecond": per_second(pt.ack_success, bucket),
                "popPerSecond": per_second(pt.pop_messages, bucket),
                "avgLagMs": pt.avg_lag.as_f64().unwrap_or(0.0),
                "maxLagMs": pt.max_lag.as_i64().unwrap_or(0),
                "avgEventLoopLagMs": 0,
                "maxEventLoopLagMs": 0,
                "minFreeSlots": 0,
                "dbErrors": 0,
                "ackFailed": pt.ack_failed,
                "dlqCount": pt.dlq,
                "queenCpuUserPct": 0,
                "queenCpuSysPct": 0,
                "queenRssMb": 0,
                "dbPoolActive": active,
                "dbPoolIdle": idle,
                "dbPoolSize": size,
            })
        })
        .collect();
    let rows = queue_rows(
        c,
        f.queue.as_deref(),
        f.namespace.as_deref(),
        f.task.as_deref(),
        MAX_QUEUES,
        0,
    );
    let mut counts = Counts::default();
    for r in &rows {
        counts.add(&r.counts);
    }
    let queues: Vec<Value> = rows
        .iter()
        .filter(|r| r.counts.total > 0 || r.counts.completed > 0)
        .map(|r| {
            json!({
                "id": r.id.to_string(),
                "name": r.name,
                "namespace": r.namespace,
                "task": r.task,
                "partitions": r.partitions,
                "totalConsumed": r.counts.completed,
            })
        })
        .collect();
    let (push_req, pop_req, ack_req) = points.iter().fold((0, 0, 0), |a, p| {
        (
            a.0 + p.push_requests,
            a.1 + p.pop_requests,
            a.2 + p.ack_requests,
        )
    });
    let (push_msg, pop_msg, ack_msg, ack_failed, dlq) =
        points.iter().fold((0, 0, 0, 0, 0), |a, p| {
            (
                a.0 + p.push_messages,
                a.1 + p.pop_messages,
                a.2 + p.ack_success + p.ack_failed,
                a.3 + p.ack_failed,
                a.4 + p.dlq,
            )
        });
    let mut messages = counts.json_failed(json!(counts.dead_letter));
    messages["requests"] = json!({"push": push_req, "pop": pop_req, "ack": ack_req});
    messages["batchEfficiency"] = json!({
        "push": ratio(push_msg, push_req),
        "pop": ratio(pop_msg, pop_req),
        "ack": ratio(ack_msg, ack_req),
    });
    let t = exec(c, query!("status_totals"), &[], &[]).next().unwrap();
    let top_errors: Vec<Value> = exec(
        c,
        query!("status_dlq_top_errors"),
        &[spi::INT8],
        &[TOP_ERRORS.into()],
    )
    .map(|r| json!({"error": spi::col::<String>(&r, "error"), "count": i(&r, "count")}))
    .collect();
    let workers: Vec<Value> = workers(c, &range, None, None)
        .into_iter()
        .map(|w| {
            json!({
                "hostname": w["hostname"],
                "workerId": w["workerId"],
                "avgEventLoopLagMs": 0,
                "maxEventLoopLagMs": 0,
                "freeSlots": 0,
                "dbConnections": w["dbConnections"],
                "jobQueueSize": 0,
                "messagesProcessed": w["ackMessages"],
            })
        })
        .collect();
    json!({
        "timeRange": range.json(),
        "bucketMinutes": bucket,
        "pointCount": throughput.len(),
        "throughput": throughput,
        "queues": queues,
        "messages": messages,
        "leases": {
            "active": i(&t, "active"),
            "partitionsWithLeases": i(&t, "partitions_with_leases"),
            "totalBatchSize": i(&t, "batch_size"),
            "totalAcked": 0,
        },
        "deadLetterQueue": {
            "totalMessages": i(&t, "dlq_current") + i(&t, "dlq_pruned"),
            "currentMessages": i(&t, "dlq_current"),
            "affectedPartitions": i(&t, "dlq_partitions"),
            "topErrors": top_errors,
        },
        "workers": workers,
        "errors": {"dbErrors": 0, "ackFailed": ack_failed, "dlqMessages": dlq},
        "statsAge": 0,
    })
}

/// `GET /api/v1/status/queues`.
pub fn status_queues(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let f = Filters::of(p);
    let (limit, offset) = p.page();
    let queues: Vec<Value> = queue_rows(
        c,
        f.queue.as_deref(),
        f.namespace.as_deref(),
        f.task.as_deref(),
        limit,
        offset,
    )
    .into_iter()
    .map(|r| {
        json!({
            "id": r.id.to_string(),
            "name": r.name,
            "namespace": r.namespace,
            "task": r.task,
            "createdAt": micros_to_iso(r.created_us),
            "partitions": r.partitions,
            "messages": r.counts.json(),
        })
    })
    .collect();
    json!({"queues": queues, "pagination": {"limit": limit, "offset": offset}})
}

/// `GET /api/v1/status/queues/:queue`; 42704 when the queue is unknown.
pub fn status_queue(c: &mut SpiClient<'_>, queue: &str) -> Value {
    let Some(q) = exec(
        c,
        query!("status_queue_config"),
        &[spi::UUID, spi::TEXT],
        &[queues::default_tenant().into(), queue.into()],
    )
    .next()
    .map(|r| {
        json!({
            "id": i(&r, "id").to_string(),
            "name": spi::col::<String>(&r, "name"),
            "namespace": spi::opt::<String>(&r, "namespace"),
            "task": spi::opt::<String>(&r, "task"),
            "priority": spi::col::<i32>(&r, "priority"),
            "createdAt": micros_to_iso(i(&r, "created_us")),
            "config": {
                "leaseTime": spi::col::<i32>(&r, "lease_time"),
                "retryLimit": spi::col::<i32>(&r, "retry_limit"),
                "retryDelay": spi::col::<i32>(&r, "retry_delay"),
                "maxQueueSize": spi::col::<i32>(&r, "max_queue_size"),
                "deadLetterQueue": spi::col::<bool>(&r, "dead_letter_queue"),
            },
        })
    }) else {
        errors::undefined("queue", queue)
    };
    let qid: i64 = q["id"].as_str().unwrap_or("0").parse().unwrap_or(0);
    // Queen's ttl, as the queue's configure kept it.
    let mut q = q;
    q["config"]["ttl"] = json!(queues::kept_options(c, qid).ttl);
    let mut totals = Counts::default();
    let partitions: Vec<Value> = exec(
        c,
        query!("status_partition_counts"),
        &[spi::INT8, spi::INT8],
        &[qid.into(), MAX_DETAIL_PARTITIONS.into()],
    )
    .map(|r| {
        let counts = Counts::of(&r);
        totals.add(&counts);
        let messages = counts.json_failed(Value::Null);
        let written = counts.total > 0;
        json!({
            "id": i(&r, "id").to_string(),
            "name": spi::col::<String>(&r, "name"),
            "createdAt": micros_to_iso(i(&r, "created_us")),
            "messages": messages,
            "stats": messages,
            "cursor": {"totalConsumed": i(&r, "consumed"), "batchesConsumed": 0},
            "lastActivity": micros_to_iso(i(&r, "last_write_us")),
            "oldestMessage": spi::opt::<i64>(&r, "oldest_us").map(micros_to_iso),
            "newestMessage": written.then(|| micros_to_iso(i(&r, "last_write_us"))),
        })
    })
    .collect();
    json!({
        "queue": q,
        "partitions": partitions,
        "totals": {"messages": totals.json_failed(Value::Null)},
    })
}

/// `GET /api/v1/status/analytics`: messages pushed per `interval`
/// (`minute`, `hour` or `day`; anything else is `hour`, as Queen does).
pub fn analytics(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(ANALYTICS_SPAN_US);
    let f = Filters::of(p);
    let interval = match p.text("interval").as_deref() {
        Some("minute") => "minute",
        Some("day") => "day",
        _ => "hour",
    };
    // A minute-wide analytics is bounded to a day of buckets.
    let range = match interval {
        "minute" if range.to_us - range.from_us > ANALYTICS_SPAN_US => Range {
            from_us: range.to_us - ANALYTICS_SPAN_US,
            ..range
        },
        _ => range,
    };
    let points: Vec<Value> = exec(
        c,
        query!("metrics_analytics"),
        &[
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
        ],
        &[
            range.from().into(),
            range.to().into(),
            interval.into(),
            f.queue.as_deref().into(),
            f.namespace.as_deref().into(),
            f.task.as_deref().into(),
        ],
    )
    .map(|r| json!({"timestamp": micros_to_iso(i(&r, "bucket_us")), "messages": i(&r, "messages")}))
    .collect();
    let tr = range.json();
    json!({"dataPoints": points, "interval": interval, "from": tr["from"], "to": tr["to"]})
}

/// Summary figures of a list of numbers: mean, median, minimum, maximum
/// (all 0 when empty).
fn summary(mut v: Vec<i64>) -> Value {
    if v.is_empty() {
        return json!({"avg": 0, "median": 0, "min": 0, "max": 0});
    }
    v.sort_unstable();
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    };
    json!({
        "avg": v.iter().sum::<i64>() as f64 / n as f64,
        "median": median,
        "min": v[0],
        "max": v[n - 1],
    })
}

/// `GET /api/v1/resources/overview`.
pub fn overview(c: &mut SpiClient<'_>) -> Value {
    let t = exec(c, query!("status_totals"), &[], &[]).next().unwrap();
    let (queues, partitions, namespaces, tasks) = (
        i(&t, "queues"),
        i(&t, "partitions"),
        i(&t, "namespaces"),
        i(&t, "tasks"),
    );
    let mut counts = Counts::default();
    for r in queue_rows(c, None, None, None, MAX_QUEUES, 0) {
        counts.add(&r.counts);
    }
    let (mut offsets, mut times) = (Vec::new(), Vec::new());
    for r in exec(
        c,
        query!("status_lag"),
        &[spi::INT8],
        &[MAX_LAG_CURSORS.into()],
    ) {
        offsets.push(i(&r, "offset_lag"));
        if let Some(ms) = spi::opt::<i64>(&r, "time_lag_ms") {
            times.push(ms / 1000);
        }
    }
    let now = crate::pg::time::wall_clock_us();
    let window = Range {
        from_us: now - THROUGHPUT_WINDOW_US,
        to_us: now,
    };
    let points = worker_series(c, &window, THROUGHPUT_WINDOW_US / MINUTE_US, None, None);
    let (ingested, processed) = points
        .iter()
        .fold((0, 0), |a, p| (a.0 + p.push_messages, a.1 + p.ack_success));
    let secs = THROUGHPUT_WINDOW_US as f64 / 1e6;
    json!({
        "queues": queues,
        "partitions": partitions,
        "namespaces": namespaces,
        "tasks": tasks,
        "messages": counts.json_failed(json!(counts.dead_letter)),
        "lag": {"time": summary(times), "offset": summary(offsets)},
        "throughput": {
            "ingestedPerSecond": ingested as f64 / secs,
            "processedPerSecond": processed as f64 / secs,
        },
        "timestamp": micros_to_iso(now),
        "statsAge": 0,
    })
}

/// The producers of figures between the range's ends: their totals.
fn workers(
    c: &mut SpiClient<'_>,
    range: &Range,
    host: Option<&str>,
    worker: Option<&str>,
) -> Vec<Value> {
    exec(
        c,
        query!("metrics_workers"),
        &[spi::TIMESTAMPTZ, spi::TIMESTAMPTZ, spi::TEXT, spi::TEXT],
        &[
            range.from().into(),
            range.to().into(),
            host.into(),
            worker.into(),
        ],
    )
    .map(|r| {
        json!({
            "hostname": spi::col::<String>(&r, "hostname"),
            "workerId": spi::col::<String>(&r, "worker_id"),
            "pushMessages": i(&r, "push_messages"),
            "popMessages": i(&r, "pop_messages"),
            "ackMessages": i(&r, "ack_messages"),
            "pushRequests": i(&r, "push_requests"),
            "popRequests": i(&r, "pop_requests"),
            "ackRequests": i(&r, "ack_requests"),
            "ackFailed": i(&r, "ack_failed"),
            "dlqCount": i(&r, "dlq"),
            "avgLagMs": avg_lag(&r),
            "maxLagMs": max_lag(&r),
            "avgEventLoopLagMs": 0,
            "maxEventLoopLagMs": 0,
            "freeSlots": 0,
            "dbConnections": i(&r, "db_connections"),
            "jobQueueSize": 0,
            "lastSeen": micros_to_iso(i(&r, "last_seen_us")),
        })
    })
    .collect()
}

/// `GET /api/v1/analytics/worker-metrics`.
pub fn worker_metrics(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let bucket = range.bucket_minutes();
    let (host, worker) = (p.text("hostname"), p.text("workerId"));
    // Without a worker: the database's own count of the work, which the
    // front-ends' rows count again.
    let series_worker = worker.as_deref().or(Some(WORKER_ID));
    let points = worker_series(c, &range, bucket, host.as_deref(), series_worker);
    let series: Vec<Value> = points
        .iter()
        .map(|pt| {
            let ack = pt.ack_success + pt.ack_failed;
            json!({
                "timestamp": micros_to_iso(pt.bucket_us),
                "pushMessages": pt.push_messages,
                "popMessages": pt.pop_messages,
                "ackMessages": ack,
                "pushRequests": pt.push_requests,
                "popRequests": pt.pop_requests,
                "ackRequests": pt.ack_requests,
                "jobsDone": pt.push_requests + pt.pop_requests + pt.ack_requests,
                "pushPerSecond": per_second(pt.push_messages, bucket),
                "popPerSecond": per_second(pt.pop_messages, bucket),
                "ackPerSecond": per_second(ack, bucket),
                "avgEventLoopLagMs": 0,
                "maxEventLoopLagMs": 0,
                "avgFreeSlots": 0,
                "minFreeSlots": 0,
                "dbConnections": pt.db_connections,
                "avgJobQueueSize": 0,
                "maxJobQueueSize": 0,
                "backoffSize": 0,
                "avgLagMs": pt.avg_lag,
                "maxLagMs": pt.max_lag,
                "lagCount": pt.lag_count,
                "dbErrors": 0,
                "ackSuccess": pt.ack_success,
                "ackFailed": pt.ack_failed,
                "dlqCount": pt.dlq,
            })
        })
        .collect();
    let sum = |g: fn(&Point) -> i64| points.iter().map(g).sum::<i64>();
    let queues: Vec<Value> = queue_groups(c, &range, None)
        .into_iter()
        .fold(
            Vec::<(String, i64, i64, i64, i64)>::new(),
            |mut acc, (q, _, pops, n, s, m)| {
                match acc.last_mut() {
                    Some(last) if last.0 == q => {
                        last.1 += pops;
                        last.2 += n;
                        last.3 += s;
                        last.4 = last.4.max(m);
                    }
                    _ => acc.push((q, pops, n, s, m)),
                }
                acc
            },
        )
        .into_iter()
        .map(|(q, pops, n, s, m)| {
            json!({
                "queueName": q,
                "popCount": pops,
                "avgLagMs": if n == 0 { Value::Null } else { json!(ratio(s, n)) },
                "maxLagMs": if n == 0 { Value::Null } else { json!(m) },
            })
        })
        .collect();
    let pending = queue_rows(c, None, None, None, MAX_QUEUES, 0)
        .iter()
        .map(|r| r.counts.pending)
        .sum::<i64>();
    json!({
        "timeRange": range.json(),
        "bucketMinutes": bucket,
        "pointCount": series.len(),
        "timeSeries": series,
        "workers": workers(c, &range, host.as_deref(), worker.as_deref()),
        "queues": queues,
        "summary": {
            "totalPushMessages": sum(|p| p.push_messages),
            "totalPopMessages": sum(|p| p.pop_messages),
            "totalAckMessages": sum(|p| p.ack_success + p.ack_failed),
            "totalPushRequests": sum(|p| p.push_requests),
            "totalPopRequests": sum(|p| p.pop_requests),
            "totalAckRequests": sum(|p| p.ack_requests),
            "totalDbErrors": 0,
            "totalAckFailed": sum(|p| p.ack_failed),
            "totalDlq": sum(|p| p.dlq),
            "pendingMessages": pending,
        },
    })
}

/// Per (queue, group): name, group, messages popped, lag count, lag sum,
/// lag maximum.
fn queue_groups(
    c: &mut SpiClient<'_>,
    range: &Range,
    queue: Option<&str>,
) -> Vec<(String, String, i64, i64, i64, i64)> {
    exec(
        c,
        query!("metrics_queue_groups"),
        &[spi::TIMESTAMPTZ, spi::TIMESTAMPTZ, spi::TEXT],
        &[range.from().into(), range.to().into(), queue.into()],
    )
    .map(|r| {
        (
            spi::col::<String>(&r, "queue"),
            spi::col::<String>(&r, "consumer_group"),
            i(&r, "pop_messages"),
            i(&r, "lag_count"),
            i(&r, "lag_sum_ms"),
            i(&r, "max_lag_ms"),
        )
    })
    .collect()
}

/// `GET /api/v1/analytics/queue-lag`: a bare array, newest first, one
/// element per (bucket, queue), with the lag per consumer group beside
/// Queen's per-queue figures.
pub fn queue_lag(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let bucket = range.bucket_minutes();
    let f = Filters {
        queue: p.text("queue"),
        namespace: None,
        task: None,
    };
    let groups = queue_groups(c, &range, f.queue.as_deref());
    let rows: Vec<Value> = queue_series(c, &range, bucket, &f)
        .into_iter()
        .map(|(q, _, pt)| {
            let by_group: Vec<Value> = groups
                .iter()
                .filter(|g| g.0 == q)
                .map(|g| {
                    json!({
                        "consumerGroup": g.1,
                        "popCount": g.2,
                        "avgLagMs": if g.3 == 0 { Value::Null } else { json!(ratio(g.4, g.3)) },
                        "maxLagMs": if g.3 == 0 { Value::Null } else { json!(g.5) },
                    })
                })
                .collect();
            json!({
                "queueName": q,
                "popCount": pt.pop_messages,
                "avgLagMs": pt.avg_lag,
                "maxLagMs": pt.max_lag,
                "bucketMinutes": bucket,
                "bucketTime": micros_to_iso(pt.bucket_us),
                "consumerGroups": by_group,
            })
        })
        .collect();
    Value::Array(rows)
}

/// `GET /api/v1/analytics/queue-ops`.
pub fn queue_ops(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let bucket = range.bucket_minutes();
    let f = Filters {
        queue: p.text("queue"),
        namespace: None,
        task: None,
    };
    let mut names: Vec<String> = Vec::new();
    let series: Vec<Value> = queue_series(c, &range, bucket, &f)
        .into_iter()
        .map(|(q, partitions, pt)| {
            if !names.contains(&q) {
                names.push(q.clone());
            }
            let ack = pt.ack_success + pt.ack_failed;
            json!({
                "bucket": micros_to_iso(pt.bucket_us),
                "queueName": q,
                "pushRequests": pt.push_requests,
                "pushMessages": pt.push_messages,
                "popMessages": pt.pop_messages,
                "popEmpty": pt.pop_empty,
                "ackRequests": pt.ack_requests,
                "ackSuccess": pt.ack_success,
                "ackFailed": pt.ack_failed,
                "transactions": pt.transactions,
                "partitionsCreated": 0,
                "partitionsDeleted": 0,
                "partitionCount": partitions,
                "avgLagMs": pt.avg_lag,
                "maxLagMs": pt.max_lag,
                "pushPerSecond": per_second(pt.push_messages, bucket),
                "popPerSecond": per_second(pt.pop_messages, bucket),
                "ackPerSecond": per_second(ack, bucket),
                "emptyPerSecond": per_second(pt.pop_empty, bucket),
                "parkedCount": 0,
            })
        })
        .collect();
    names.sort();
    json!({
        "timeRange": range.json(),
        "bucketMinutes": bucket,
        "series": series,
        "queues": names,
    })
}

/// `GET /api/v1/analytics/retention` in Queen's shape.
pub fn retention_series(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let bucket = range.bucket_minutes();
    let queue = p.text("queue");
    let mut totals = [0i64; 5];
    let series: Vec<Value> = exec(
        c,
        query!("metrics_retention_series"),
        &[spi::TIMESTAMPTZ, spi::TIMESTAMPTZ, spi::INT8, spi::TEXT],
        &[
            range.from().into(),
            range.to().into(),
            bucket.into(),
            queue.as_deref().into(),
        ],
    )
    .map(|r| {
        let v = [
            i(&r, "retention"),
            i(&r, "completed"),
            i(&r, "eviction"),
            i(&r, "total"),
            i(&r, "events"),
        ];
        for (t, x) in totals.iter_mut().zip(v) {
            *t += x;
        }
        json!({
            "bucket": micros_to_iso(i(&r, "bucket_us")),
            "retentionMsgs": v[0],
            "completedRetentionMsgs": v[1],
            "evictionMsgs": v[2],
            "totalMsgs": v[3],
            "eventCount": v[4],
        })
    })
    .collect();
    json!({
        "timeRange": range.json(),
        "bucketMinutes": bucket,
        "series": series,
        "totals": {
            "retentionMsgs": totals[0],
            "completedRetentionMsgs": totals[1],
            "evictionMsgs": totals[2],
            "totalMsgs": totals[3],
            "eventCount": totals[4],
        },
    })
}

/// One figure of a system sample: `{avg, min, max, last}`.
fn leaf(r: &SpiHeapTupleData<'_>, prefix: &str) -> Value {
    let get =
        |k: &str| -> Value { f(r, &format!("{prefix}_{k}")).map_or(Value::Null, |v| json!(v)) };
    json!({"avg": get("avg"), "min": get("min"), "max": get("max"), "last": get("last")})
}

fn zero_leaf() -> Value {
    json!({"avg": 0, "min": 0, "max": 0, "last": 0})
}

/// `GET /api/v1/analytics/system-metrics`: per database server, its
/// samples per bucket.
pub fn system_metrics(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let bucket = range.bucket_minutes();
    let (host, worker) = (p.text("hostname"), p.text("workerId"));
    let mut replicas: Vec<Value> = Vec::new();
    let mut points = 0usize;
    for r in exec(
        c,
        query!("metrics_system_series"),
        &[
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
        ],
        &[
            range.from().into(),
            range.to().into(),
            bucket.into(),
            host.as_deref().into(),
            worker.as_deref().into(),
        ],
    ) {
        let (h, port, w) = (
            spi::col::<String>(&r, "hostname"),
            spi::col::<i32>(&r, "port"),
            spi::col::<String>(&r, "worker_id"),
        );
        let point = json!({
            "timestamp": micros_to_iso(i(&r, "bucket_us")),
            "sampleCount": i(&r, "samples"),
            "metrics": {
                "cpu": {"user_us": zero_leaf(), "system_us": zero_leaf()},
                "memory": {"rss_bytes": zero_leaf(), "virtual_bytes": zero_leaf()},
                "database": {
                    "pool_size": leaf(&r, "connections"),
                    "pool_idle": leaf(&r, "idle"),
                    "pool_active": leaf(&r, "active"),
                    "max_connections": leaf(&r, "max_conn"),
                    "size_bytes": leaf(&r, "size"),
                    "commits_per_second": leaf(&r, "commits"),
                    "rollbacks_per_second": leaf(&r, "rollbacks"),
                    "wal_bytes_per_second": leaf(&r, "wal"),
                },
                "threadpool": {},
                "registries": {},
                "shared_state": {},
            },
        });
        points += 1;
        let same = replicas.last().is_some_and(|last| {
            last["hostname"] == h.as_str() && last["port"] == port && last["workerId"] == w.as_str()
        });
        if same {
            replicas.last_mut().unwrap()["timeSeries"]
                .as_array_mut()
                .unwrap()
                .push(point);
        } else {
            replicas
                .push(json!({"hostname": h, "port": port, "workerId": w, "timeSeries": [point]}));
        }
    }
    json!({
        "timeRange": range.json(),
        "replicas": replicas,
        "replicaCount": replicas.len(),
        "bucketMinutes": bucket,
        "pointCount": points,
    })
}

/// `GET /metrics`, in Queen's JSON shape.
pub fn metrics_summary(c: &mut SpiClient<'_>) -> Value {
    let r = exec(
        c,
        query!("metrics_summary"),
        &[spi::TEXT],
        &[WORKER_ID.into()],
    )
    .next()
    .unwrap();
    json!({
        "uptime": i(&r, "uptime_s"),
        "requests": {"total": i(&r, "requests"), "rate": 0},
        "messages": {"total": i(&r, "messages"), "rate": 0},
        "database": {
            "poolSize": i(&r, "connections"),
            "idleConnections": i(&r, "idle"),
            "waitingRequests": 0,
        },
        "memory": {"rss": 0, "heapTotal": 0, "heapUsed": 0, "external": 0, "arrayBuffers": 0},
        "cpu": {"user": 0, "system": 0},
    })
}

/// `POST /api/v1/stats/refresh`: counts are live, so nothing is refreshed;
/// the answer reports what a refresh would have covered.
pub fn stats_refresh(c: &mut SpiClient<'_>) -> Value {
    let r = exec(c, query!("status_refresh"), &[], &[]).next().unwrap();
    json!({
        "engine": "segments",
        "queuesUpdated": i(&r, "queues"),
        "segPartitions": i(&r, "partitions"),
        "namespaces": {"namespacesUpdated": i(&r, "namespaces")},
        "tasks": {"tasksUpdated": i(&r, "tasks")},
        "system": {"systemUpdated": 1},
        "refreshedAt": micros_to_iso(i(&r, "now_us")),
    })
}
