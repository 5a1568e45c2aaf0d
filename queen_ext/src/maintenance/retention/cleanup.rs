//! Empty-partition cleanup and the metrics purge: the two phases that are not
//! per partition.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;
use serde::Serialize;

use crate::pg::spi::{self, exec};
use crate::query;

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct BatchResult {
    pub deleted: i64,
    pub done: bool,
}

/// Deletes up to `max_rows` partitions that `log_partition_dead_v1` calls
/// dead at `cutoff`. Candidates are locked ascending by id in one statement,
/// skipping any a pusher holds, and the predicate is evaluated again under
/// the locks (the authoritative pass). Their sidecar rows are deleted
/// explicitly, and so are their cursors' states; the partition rows
/// cascade to their cursors. One
/// `__partition_deleted__` audit row per partition.
pub fn partition_cleanup_step(
    client: &mut SpiClient<'_>,
    cutoff: TimestampWithTimeZone,
    max_rows: i32,
) -> BatchResult {
    let locked: Vec<i64> = exec(
        client,
        query!("retention_cleanup_dead_partitions"),
        &[spi::TIMESTAMPTZ, spi::INT8],
        &[cutoff.into(), (max_rows as i64).into()],
    )
    .map(|r| spi::col::<i64>(&r, "id"))
    .collect();
    let found = locked.len() as i64;
    if locked.is_empty() {
        return BatchResult {
            deleted: 0,
            done: true,
        };
    }
    let dead: Vec<i64> = exec(
        client,
        query!("retention_cleanup_still_dead"),
        &[spi::INT8_ARRAY, spi::TIMESTAMPTZ],
        &[locked.into(), cutoff.into()],
    )
    .map(|r| spi::col::<i64>(&r, "id"))
    .collect();
    if !dead.is_empty() {
        // A dead partition has no segment left (its veto, checked again
        // under the row lock every push takes to write one): only the
        // sidecar rows, which have no foreign key, go explicitly.
        exec(
            client,
            "DELETE FROM queen.log_txns WHERE partition_id = ANY($1)",
            &[spi::INT8_ARRAY],
            &[dead.clone().into()],
        );
        // Nor do the cursors' states (the cursors cascade).
        crate::catalog::cursors::delete_states_of_partitions(client, &dead);
        exec(
            client,
            query!("retention_cleanup_history"),
            &[spi::INT8_ARRAY],
            &[dead.clone().into()],
        );
        exec(
            client,
            "DELETE FROM queen.log_partitions WHERE id = ANY($1)",
            &[spi::INT8_ARRAY],
            &[dead.clone().into()],
        );
    }
    BatchResult {
        deleted: dead.len() as i64,
        done: found < max_rows as i64,
    }
}

/// Ages out observability rows older than `cutoff`: at most `max_rows`
/// retention history rows and at most `max_rows` message traces (Queen's
/// server keeps traces for ever; here they last the metrics window). A
/// schema without the trace table (0.2.0, before its update) has only the
/// history.
pub fn metrics_purge_step(
    client: &mut SpiClient<'_>,
    cutoff: TimestampWithTimeZone,
    max_rows: i32,
) -> BatchResult {
    let purge = |client: &mut SpiClient<'_>, sql: &'static str| -> i64 {
        exec(
            client,
            sql,
            &[spi::TIMESTAMPTZ, spi::INT8],
            &[cutoff.into(), (max_rows as i64).into()],
        )
        .next()
        .and_then(|r| spi::opt::<i64>(&r, "deleted"))
        .unwrap_or(0)
    };
    let history = purge(client, query!("retention_cleanup_metrics_purge_step"));
    let traces = if spi::queen_table_exists(c"message_traces") {
        purge(client, query!("retention_cleanup_traces_purge_step"))
    } else {
        0
    };
    let series = metrics_series_purge_step(client, cutoff, max_rows);
    BatchResult {
        deleted: history + traces + series.deleted,
        done: history < max_rows as i64 && traces < max_rows as i64 && series.done,
    }
}

/// The metrics series' rows older than `cutoff`, at most `max_rows` of each
/// series; nothing on a schema without them.
fn metrics_series_purge_step(
    client: &mut SpiClient<'_>,
    cutoff: TimestampWithTimeZone,
    max_rows: i32,
) -> BatchResult {
    if !crate::maintenance::metrics::sample::tables_present(client) {
        return BatchResult {
            deleted: 0,
            done: true,
        };
    }
    let row = exec(
        client,
        query!("retention_cleanup_metrics_series_purge_step"),
        &[spi::TIMESTAMPTZ, spi::INT8],
        &[cutoff.into(), (max_rows as i64).into()],
    )
    .next();
    let counts: Vec<i64> = ["queues", "workers", "systems"]
        .iter()
        .map(|k| {
            row.as_ref()
                .and_then(|r| spi::opt::<i64>(r, k))
                .unwrap_or(0)
        })
        .collect();
    BatchResult {
        deleted: counts.iter().sum(),
        done: counts.iter().all(|&n| n < max_rows as i64),
    }
}
