//! The readers an operator looks at: the overview, why retention keeps what
//! it keeps, its time series, table sizes, the sweepers' metrics and the
//! maintenance tasks' state.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use serde_json::json;

use crate::maintenance::sweeper::metrics;
use crate::pg::spi;
use crate::reads::retention;
use crate::reads::status;
use crate::wire::datum::JsonOut;

/// Why a queue's disk does (not) shrink, per partition.
#[pg_extern]
fn retention_explain(queue: &str, max_partitions: default!(i32, 100)) -> JsonOut {
    JsonOut::of(&spi::spi(|c| retention::explain(c, queue, max_partitions)))
}

/// Deprecated (0.13.0; removed in 0.14.0): `retention_series`, whose
/// answer the front-end turns into this one. Deleted messages per rule and
/// time bucket since `since`.
#[pg_extern]
fn retention_timeseries(since: TimestampWithTimeZone, bucket: default!(&str, "'hour'")) -> JsonOut {
    JsonOut::of(&spi::spi(|c| retention::timeseries(c, since, bucket)))
}

/// Sizes of the largest tables of the queen schema.
#[pg_extern]
fn table_sizes() -> JsonOut {
    JsonOut::of(&spi::spi(retention::table_sizes))
}

/// Every queue at a glance: totals (`queues`, `partitions`, `messages`,
/// `failed`, `pruned_failed`), `namespaces`, `tasks`, the message counts by
/// state (`counts`), the cursors' `lag` (time and offset: min, max, avg,
/// median), the `throughput` of the last minutes, and `timestamp`.
#[pg_extern]
fn overview() -> JsonOut {
    JsonOut::of(&spi::spi(status::overview))
}

/// What the sweepers did: fired count and lateness, due count, KV rows
/// expired but still present, and whether a slow phase is off.
#[pg_extern]
fn sweeper_metrics() -> JsonOut {
    let mut m = metrics::snapshot();
    // Set aside for good: counted from the table, so it survives a restart.
    m["timersSetAside"] = json!(spi::spi(crate::timers::set_aside_count));
    JsonOut::of(&m)
}

/// The maintenance tasks (retention, its watermark walk, partition cleanup,
/// the metrics series): on or off, running now and where, last started and
/// finished, last error, next due.
#[pg_extern]
fn maintenance_status() -> JsonOut {
    JsonOut::of(&spi::spi(crate::maintenance::status::status))
}
