//! The readers of the status routes, in the shapes Queen's server answers:
//! the status, the queues' live counts, one queue, the overview, the
//! metrics summary and the refresh. Message counts (pending, processing,
//! completed, dead letter) are computed live from the watermarks, cursors
//! and leases; throughput comes from the metrics series (`series`).
//! Figures Queen's server has that mean nothing here (its event loop, job
//! queue, free slots, process CPU and memory) are answered 0, as
//! docs/http.md says.

use pgrx::spi::{SpiClient, SpiHeapTupleData};
use serde_json::{json, Value};

use super::series::{
    i, per_bucket, per_second, pool_by_bucket, queue_series, ratio, total, worker_series, workers,
    Filters, Point,
};
use crate::catalog::queues;
use crate::maintenance::metrics::params::{Params, Range, DEFAULT_SPAN_US, MINUTE_US};
use crate::maintenance::metrics::sample::WORKER_ID;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;

/// The most queues a status, overview or refresh reads counts of, and a
/// queue listing given no limit lists.
pub const MAX_QUEUES: i64 = 100_000;
/// The most partitions a queue detail lists.
pub const MAX_DETAIL_PARTITIONS: i64 = 1000;
/// The most consumer-group cursors the overview's lag figures read.
pub const MAX_LAG_CURSORS: i64 = 100_000;
/// The most distinct errors the status's dead-letter summary lists.
pub const TOP_ERRORS: i64 = 5;
/// The window the overview's throughput is averaged over (Queen: 5 minutes).
pub const THROUGHPUT_WINDOW_US: i64 = 5 * MINUTE_US;

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

/// The pending messages over every queue, live.
pub(super) fn pending_total(c: &mut SpiClient<'_>) -> i64 {
    queue_rows(c, None, None, None, MAX_QUEUES, 0)
        .iter()
        .map(|r| r.counts.pending)
        .sum::<i64>()
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
    let throughput = throughput(c, &range, bucket, &points);
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
    let (leases, dead_letters) = leases_and_dead_letters(c);
    json!({
        "timeRange": range.json(),
        "bucketMinutes": bucket,
        "pointCount": throughput.len(),
        "throughput": throughput,
        "queues": consumed(&rows),
        "messages": status_messages(&counts, &points),
        "leases": leases,
        "deadLetterQueue": dead_letters,
        "workers": status_workers(c, &range),
        "errors": {
            "dbErrors": 0,
            "ackFailed": total(&points, |p| p.ack_failed),
            "dlqMessages": total(&points, |p| p.dlq),
        },
        "statsAge": 0,
    })
}

/// The status's throughput per bucket of `points`, with the database's
/// connection figures of the bucket.
fn throughput(c: &mut SpiClient<'_>, range: &Range, bucket: i64, points: &[Point]) -> Vec<Value> {
    let pools = pool_by_bucket(c, range, bucket);
    points
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
        .collect()
}

/// The queues holding messages or having had some consumed, with how many
/// were.
fn consumed(rows: &[QueueRow]) -> Vec<Value> {
    rows.iter()
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
        .collect()
}

/// The status's `messages`: the live counts, the requests over `points`
/// and the messages each carried on average.
fn status_messages(counts: &Counts, points: &[Point]) -> Value {
    let sum = |g: fn(&Point) -> i64| total(points, g);
    let (push_req, pop_req, ack_req) = (
        sum(|p| p.push_requests),
        sum(|p| p.pop_requests),
        sum(|p| p.ack_requests),
    );
    let mut messages = counts.json_failed(json!(counts.dead_letter));
    messages["requests"] = json!({"push": push_req, "pop": pop_req, "ack": ack_req});
    messages["batchEfficiency"] = json!({
        "push": ratio(sum(|p| p.push_messages), push_req),
        "pop": ratio(sum(|p| p.pop_messages), pop_req),
        "ack": ratio(sum(|p| p.ack_success + p.ack_failed), ack_req),
    });
    messages
}

/// The status's `leases` and `deadLetterQueue`: the live leases, and the
/// dead letters with their most frequent errors.
fn leases_and_dead_letters(c: &mut SpiClient<'_>) -> (Value, Value) {
    let t = exec(c, query!("status_totals"), &[], &[]).next().unwrap();
    let top_errors: Vec<Value> = exec(
        c,
        query!("status_dlq_top_errors"),
        &[spi::INT8],
        &[TOP_ERRORS.into()],
    )
    .map(|r| json!({"error": spi::col::<String>(&r, "error"), "count": i(&r, "count")}))
    .collect();
    let leases = json!({
        "active": i(&t, "active"),
        "partitionsWithLeases": i(&t, "partitions_with_leases"),
        "totalBatchSize": i(&t, "batch_size"),
        "totalAcked": 0,
    });
    let dead_letters = json!({
        "totalMessages": i(&t, "dlq_current") + i(&t, "dlq_pruned"),
        "currentMessages": i(&t, "dlq_current"),
        "affectedPartitions": i(&t, "dlq_partitions"),
        "topErrors": top_errors,
    });
    (leases, dead_letters)
}

/// The producers of figures over `range`, as the status lists them.
fn status_workers(c: &mut SpiClient<'_>, range: &Range) -> Vec<Value> {
    workers(c, range, None, None)
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
        .collect()
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

/// The overview (`queen.overview()`): Queen's overview ([`queen_overview`])
/// with its counts by state as `counts`, and queen's own totals: the
/// messages kept (`messages`, the counts' total), the dead letters
/// (`failed`) and those DLQ retention removed (`pruned_failed`).
pub fn overview(c: &mut SpiClient<'_>) -> Value {
    let (mut out, kept) = read_overview(c);
    out["counts"] = out["messages"].take();
    out["messages"] = json!(kept.messages);
    out["failed"] = json!(kept.failed);
    out["pruned_failed"] = json!(kept.pruned_failed);
    out
}

/// Deprecated with `queen.system_overview()` (the front-end builds this
/// from [`overview`]): `GET /api/v1/resources/overview` in Queen's shape.
pub fn queen_overview(c: &mut SpiClient<'_>) -> Value {
    read_overview(c).0
}

/// What the overview adds up of the messages: kept, dead-lettered, and
/// removed by DLQ retention.
struct Kept {
    messages: i64,
    failed: i64,
    pruned_failed: i64,
}

/// Queen's overview: the server-wide totals, the counts by state of every
/// queue (at most [`MAX_QUEUES`], newest first), the cursors' lag, the
/// throughput of the last minutes; and the messages kept, dead-lettered and
/// pruned, read on the way.
fn read_overview(c: &mut SpiClient<'_>) -> (Value, Kept) {
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
    let kept = Kept {
        messages: counts.total,
        failed: i(&t, "dlq_current"),
        pruned_failed: i(&t, "dlq_pruned"),
    };
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
    let out = json!({
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
    });
    (out, kept)
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
