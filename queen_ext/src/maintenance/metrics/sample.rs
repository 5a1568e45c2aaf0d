//! The metrics task: once per `queen.metrics_interval_ms` it takes the
//! message path's counters (engine::counters) and adds them to the minute's
//! rows of `queue_lag_metrics` (one per queue and consumer group that did
//! something) and `worker_metrics` (the server-wide totals), and samples
//! the database into `system_metrics`. Its cost follows the work: one row
//! per (queue, group) active in the interval, three statements, and no scan
//! of partitions. On a schema without the series' tables (0.2.0 before its
//! update) it does nothing and leaves the counters to accumulate.

use pgrx::spi::SpiClient;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::engine::counters::{self, Count, Taken};
use crate::maintenance::bgworker::in_own_transaction;
use crate::maintenance::retention::lease;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::query;

/// The task's row in `queen.maintenance_leases`.
pub const TASK: &str = "metrics";
/// The worker id the extension's own figures are written under.
pub const WORKER_ID: &str = "queen_ext";

/// What one sample wrote.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Sampled {
    /// Rows of `queue_lag_metrics` added to.
    pub queues: i64,
    /// Rows of `worker_metrics` added to.
    pub workers: i64,
    /// Rows of `system_metrics` written.
    pub systems: i64,
    /// True when the series' tables do not exist (nothing was done).
    pub skipped: bool,
}

/// Whether the series' tables exist (a 0.2.0 schema lacks them).
pub fn tables_present(c: &mut SpiClient<'_>) -> bool {
    exec(c, query!("metrics_tables_present"), &[], &[])
        .next()
        .and_then(|r| spi::opt::<bool>(&r, "present"))
        .unwrap_or(false)
}

/// The name of the machine the database runs on (Linux), `localhost` when
/// it cannot be read.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// The names of the counters as the series' columns have them.
const COLUMNS: [(Count, &str); counters::COUNTS] = [
    (Count::PushRequests, "push_request_count"),
    (Count::PushMessages, "push_message_count"),
    (Count::PopRequests, "pop_request_count"),
    (Count::PopMessages, "pop_message_count"),
    (Count::PopEmpty, "pop_empty_count"),
    (Count::AckRequests, "ack_request_count"),
    (Count::AckSuccess, "ack_success_count"),
    (Count::AckFailed, "ack_failed_count"),
    (Count::Dlq, "dlq_count"),
    (Count::Transactions, "transaction_count"),
    (Count::LagCount, "lag_count"),
    (Count::LagSumMs, "lag_sum_ms"),
    (Count::LagMaxMs, "max_lag_ms"),
];

fn record(counts: &[i64; counters::COUNTS]) -> Map<String, Value> {
    COLUMNS
        .iter()
        .map(|&(k, name)| (name.to_owned(), json!(counts[k as usize])))
        .collect()
}

/// Adds `b` into `a`, the maximum taken as a maximum.
fn merge(a: &mut [i64; counters::COUNTS], b: &[i64; counters::COUNTS]) {
    for i in 0..counters::COUNTS {
        if i == Count::LagMaxMs as usize {
            a[i] = a[i].max(b[i]);
        } else {
            a[i] += b[i];
        }
    }
}

/// Writes what `taken` holds: one row per (queue, group), one total, one
/// database sample.
pub fn write(c: &mut SpiClient<'_>, taken: &[Taken]) -> Sampled {
    let mut by_key: std::collections::BTreeMap<(i64, &str), [i64; counters::COUNTS]> =
        std::collections::BTreeMap::new();
    let mut total = [0i64; counters::COUNTS];
    for t in taken {
        merge(&mut total, &t.counts);
        if t.queue_id != 0 {
            merge(
                by_key
                    .entry((t.queue_id, t.group.as_str()))
                    .or_insert([0; counters::COUNTS]),
                &t.counts,
            );
        }
    }
    let rows: Vec<Value> = by_key
        .iter()
        .map(|(&(queue_id, group), counts)| {
            let mut r = record(counts);
            r.insert("queue_id".into(), json!(queue_id));
            r.insert("consumer_group".into(), json!(group));
            Value::Object(r)
        })
        .collect();
    let host = hostname();
    let mut out = Sampled::default();
    if !rows.is_empty() {
        out.queues = exec(
            c,
            query!("metrics_write_queues"),
            &[spi::JSONB],
            &[pgrx::JsonB(Value::Array(rows)).into()],
        )
        .count() as i64;
    }
    out.workers = exec(
        c,
        query!("metrics_write_worker"),
        &[spi::TEXT, spi::TEXT, spi::JSONB],
        &[
            host.as_str().into(),
            WORKER_ID.into(),
            pgrx::JsonB(Value::Object(record(&total))).into(),
        ],
    )
    .count() as i64;
    out.systems = exec(
        c,
        query!("metrics_write_system"),
        &[spi::TEXT, spi::TEXT],
        &[host.as_str().into(), WORKER_ID.into()],
    )
    .count() as i64;
    out
}

/// One sample in the caller's transaction: takes the counters and writes
/// them; nothing (skipped) on a schema without the series' tables. The
/// counters taken are gone even if the caller's transaction rolls back.
pub fn sample(c: &mut SpiClient<'_>) -> Sampled {
    if !tables_present(c) {
        return Sampled {
            skipped: true,
            ..Sampled::default()
        };
    }
    let taken = counters::take();
    write(c, &taken)
}

/// The task as the maintenance worker runs it: when the period is not 0,
/// the tables exist and the task is due and not leased, one sample under
/// the lease, in a transaction of its own. A failed sample leaves the task
/// due and is answered as Err.
pub fn run_task(holder: &str) -> Result<(), String> {
    let period = settings::metrics_interval_ms();
    if period == 0 {
        return Ok(());
    }
    let lease_ms = settings::maintenance_lease_ms();
    let token = in_own_transaction(|| {
        spi::spi(|c| {
            if !tables_present(c) {
                return None;
            }
            exec(
                c,
                query!("metrics_lease_ensure"),
                &[spi::TEXT],
                &[TASK.into()],
            );
            lease::claim(c, TASK, holder, lease_ms)
        })
    })?;
    let Some(token) = token else { return Ok(()) };
    let outcome = in_own_transaction(|| spi::spi(|c| write(c, &counters::take())));
    let error = outcome.as_ref().err().cloned();
    in_own_transaction(|| {
        spi::spi(|c| {
            exec(
                c,
                query!("metrics_lease_release"),
                &[spi::TEXT, spi::INT8, spi::INT8, spi::TEXT],
                &[
                    TASK.into(),
                    token.into(),
                    outcome.is_ok().then_some(period).into(),
                    error.as_deref().into(),
                ],
            );
        })
    })?;
    outcome.map(|_| ())
}
