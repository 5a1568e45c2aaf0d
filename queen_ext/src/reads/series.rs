//! The readers of the analytics routes, and the series the status reads:
//! per bucket of the metrics series, the producers' totals, the queues',
//! the database servers' and retention's, in the shapes Queen's server
//! answers. Figures Queen's server has that mean nothing here (its event
//! loop, job queue, free slots, process CPU and memory) are answered 0, as
//! docs/http.md says. The totals over every producer read the extension's
//! own row (`queen_ext`), which counts all the work the front-ends' rows
//! count again; a `workerId` picks one.

use pgrx::spi::{SpiClient, SpiHeapTupleData, SpiTupleTable};
use serde_json::{json, Value};

use super::status::pending_total;
use crate::maintenance::metrics::params::{Params, Range, ANALYTICS_SPAN_US, DEFAULT_SPAN_US};
use crate::maintenance::metrics::sample::WORKER_ID;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;

pub(super) fn i(r: &SpiHeapTupleData<'_>, name: &str) -> i64 {
    spi::opt::<i64>(r, name).unwrap_or(0)
}

fn f(r: &SpiHeapTupleData<'_>, name: &str) -> Option<f64> {
    spi::opt::<f64>(r, name)
}

pub(super) fn ratio(n: i64, d: i64) -> f64 {
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

pub(super) struct Filters {
    pub(super) queue: Option<String>,
    pub(super) namespace: Option<String>,
    pub(super) task: Option<String>,
}

impl Filters {
    pub(super) fn of(p: &Params) -> Filters {
        Filters {
            queue: p.text("queue"),
            namespace: p.text("namespace"),
            task: p.text("task"),
        }
    }
    pub(super) fn any(&self) -> bool {
        self.queue.is_some() || self.namespace.is_some() || self.task.is_some()
    }
}

/// One bucket of a throughput series (the worker totals, or a queue's).
pub(super) struct Point {
    pub(super) bucket_us: i64,
    pub(super) push_requests: i64,
    pub(super) push_messages: i64,
    pub(super) pop_requests: i64,
    pub(super) pop_messages: i64,
    pub(super) pop_empty: i64,
    pub(super) ack_requests: i64,
    pub(super) ack_success: i64,
    pub(super) ack_failed: i64,
    pub(super) dlq: i64,
    pub(super) transactions: i64,
    pub(super) lag_count: i64,
    pub(super) avg_lag: Value,
    pub(super) max_lag: Value,
    pub(super) db_connections: i64,
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

/// The sum of one figure over `points`.
pub(super) fn total(points: &[Point], figure: fn(&Point) -> i64) -> i64 {
    points.iter().map(figure).sum()
}

pub(super) fn worker_series(
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
pub(super) fn queue_series(
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
pub(super) fn per_bucket(rows: Vec<(String, i64, Point)>) -> Vec<Point> {
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

pub(super) fn per_second(n: i64, bucket_minutes: i64) -> f64 {
    n as f64 / (bucket_minutes * 60) as f64
}

/// The database servers' samples per bucket over `range`, of one host or
/// worker when given.
fn system_series<'c>(
    c: &mut SpiClient<'c>,
    range: &Range,
    bucket: i64,
    host: Option<&str>,
    worker: Option<&str>,
) -> SpiTupleTable<'c> {
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
            host.into(),
            worker.into(),
        ],
    )
}

/// The database's connection figures per bucket (the newest server's),
/// for the status's pool fields.
pub(super) fn pool_by_bucket(
    c: &mut SpiClient<'_>,
    range: &Range,
    bucket: i64,
) -> std::collections::HashMap<i64, (i64, i64, i64)> {
    system_series(c, range, bucket, None, None)
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

/// The producers of figures between the range's ends: their totals.
pub(super) fn workers(
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

/// `GET /api/v1/analytics/worker-metrics`.
pub fn worker_metrics(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let bucket = range.bucket_minutes();
    let (host, worker) = (p.text("hostname"), p.text("workerId"));
    // Without a worker: the database's own count of the work, which the
    // front-ends' rows count again.
    let series_worker = worker.as_deref().or(Some(WORKER_ID));
    let points = worker_series(c, &range, bucket, host.as_deref(), series_worker);
    let series: Vec<Value> = points.iter().map(|pt| worker_point(pt, bucket)).collect();
    let sum = |g: fn(&Point) -> i64| total(&points, g);
    let queues = queue_lags(queue_groups(c, &range, None));
    let pending = pending_total(c);
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

/// One bucket of the worker series, as the worker metrics answer it.
fn worker_point(pt: &Point, bucket: i64) -> Value {
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
}

/// Per queue, the pops and the lag of its groups' rows summed (the rows
/// come by queue).
fn queue_lags(groups: Vec<(String, String, i64, i64, i64, i64)>) -> Vec<Value> {
    groups
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
        .collect()
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

/// The figures of a retention series point, and of its totals: each
/// (key, column), the three rules' messages, segments and deletions.
const RETENTION_FIGURES: [(&str, &str); 12] = [
    ("retentionMsgs", "retention"),
    ("completedRetentionMsgs", "completed"),
    ("evictionMsgs", "eviction"),
    ("totalMsgs", "total"),
    ("eventCount", "events"),
    ("retentionSegments", "retention_segments"),
    ("completedRetentionSegments", "completed_segments"),
    ("evictionSegments", "eviction_segments"),
    ("totalSegments", "total_segments"),
    ("retentionEvents", "retention_events"),
    ("completedRetentionEvents", "completed_events"),
    ("evictionEvents", "eviction_events"),
];

/// What retention deleted from `from` to `to` (for `queue`, or every
/// queue), per bucket: the width the range implies, or `bucket` (`minute`,
/// `hour`, `day` of the session's time zone). Each bucket with a
/// deletion, oldest first, with each rule's messages, segments and
/// deletions and their totals; and the totals of the range.
pub fn retention_series(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let calendar = p.text("bucket");
    let bucket = match calendar.as_deref() {
        None => range.bucket_minutes(),
        Some("minute") => 1,
        Some("hour") => 60,
        Some("day") => 24 * 60,
        Some(b) => {
            crate::pg::errors::invalid("bucket", format!("{b:?} is not one of minute, hour, day"))
        }
    };
    let queue = p.text("queue");
    let mut totals = [0i64; RETENTION_FIGURES.len()];
    let series: Vec<Value> = exec(
        c,
        query!("metrics_retention_series"),
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
            queue.as_deref().into(),
            calendar.as_deref().into(),
        ],
    )
    .map(|r| {
        let mut point = serde_json::Map::new();
        point.insert("bucket".into(), json!(micros_to_iso(i(&r, "bucket_us"))));
        for ((key, column), total) in RETENTION_FIGURES.iter().zip(totals.iter_mut()) {
            let v = i(&r, column);
            *total += v;
            point.insert((*key).into(), json!(v));
        }
        Value::Object(point)
    })
    .collect();
    let totals: serde_json::Map<String, Value> = RETENTION_FIGURES
        .iter()
        .zip(totals)
        .map(|((key, _), v)| ((*key).to_owned(), json!(v)))
        .collect();
    json!({
        "timeRange": range.json(),
        "bucketMinutes": bucket,
        "series": series,
        "totals": totals,
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

/// One bucket of a database server's samples, as the system metrics
/// answer it.
fn system_point(r: &SpiHeapTupleData<'_>) -> Value {
    json!({
        "timestamp": micros_to_iso(i(r, "bucket_us")),
        "sampleCount": i(r, "samples"),
        "metrics": {
            "cpu": {"user_us": zero_leaf(), "system_us": zero_leaf()},
            "memory": {"rss_bytes": zero_leaf(), "virtual_bytes": zero_leaf()},
            "database": {
                "pool_size": leaf(r, "connections"),
                "pool_idle": leaf(r, "idle"),
                "pool_active": leaf(r, "active"),
                "max_connections": leaf(r, "max_conn"),
                "size_bytes": leaf(r, "size"),
                "commits_per_second": leaf(r, "commits"),
                "rollbacks_per_second": leaf(r, "rollbacks"),
                "wal_bytes_per_second": leaf(r, "wal"),
            },
            "threadpool": {},
            "registries": {},
            "shared_state": {},
        },
    })
}

/// `GET /api/v1/analytics/system-metrics`: per database server, its
/// samples per bucket.
pub fn system_metrics(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let range = p.range(DEFAULT_SPAN_US);
    let bucket = range.bucket_minutes();
    let (host, worker) = (p.text("hostname"), p.text("workerId"));
    let mut replicas: Vec<Value> = Vec::new();
    let mut points = 0usize;
    for r in system_series(c, &range, bucket, host.as_deref(), worker.as_deref()) {
        let (h, port, w) = (
            spi::col::<String>(&r, "hostname"),
            spi::col::<i32>(&r, "port"),
            spi::col::<String>(&r, "worker_id"),
        );
        let point = system_point(&r);
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
