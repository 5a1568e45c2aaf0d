//! Retention: bounded steps, the leased cycle, the work list, and the
//! operator's readers. Every step and the whole cycle can be called from SQL.

pub mod cleanup;
pub mod cycle;
pub mod explain;
pub mod lease;
pub mod step;
pub mod watermark;
pub mod work_list;
pub mod worker;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use pgrx::JsonB;

use crate::errors;
use crate::jsonio::JsonOut;
use crate::sql;

fn check_max_rows(max_rows: i32) -> i32 {
    if max_rows <= 0 {
        errors::invalid("p_max_rows", format!("{max_rows} must be at least 1"));
    }
    max_rows
}

fn as_jsonb<T: serde::Serialize>(v: &T) -> JsonB {
    JsonB(serde_json::to_value(v).expect("results serialize"))
}

/// One retention step (rules 1 and 2) over one partition; NULL cutoffs
/// disable their rule. `{"deleted", "new_log_start", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn log_retention_step_v1(
    p_pid: i64,
    p_all_cutoff: Option<TimestampWithTimeZone>,
    p_completed_cutoff: Option<TimestampWithTimeZone>,
    p_max_rows: i32,
    p_history_type: default!(Option<&str>, "NULL"),
) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&sql::spi(|c| {
        step::retention_step(
            c,
            p_pid,
            p_all_cutoff,
            p_completed_cutoff,
            max,
            p_history_type,
        )
    }))
}

/// One sidecar purge step. `{"deleted", "new_txns_start", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn log_txns_purge_step_v1(p_pid: i64, p_cutoff: TimestampWithTimeZone, p_max_rows: i32) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&sql::spi(|c| {
        step::txns_purge_step(c, p_pid, p_cutoff, max)
    }))
}

/// One max-wait eviction step: the retention step with rule 2 off.
#[pg_extern(schema = "queen_internal")]
fn log_evict_max_wait_step_v1(
    p_pid: i64,
    p_cutoff: TimestampWithTimeZone,
    p_max_rows: i32,
) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&sql::spi(|c| {
        step::retention_step(
            c,
            p_pid,
            Some(p_cutoff),
            None,
            max,
            Some("max_wait_time_eviction"),
        )
    }))
}

/// One batch of empty-partition cleanup. `{"deleted", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn log_partition_cleanup_step_v1(p_cutoff: TimestampWithTimeZone, p_max_rows: i32) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&sql::spi(|c| {
        cleanup::partition_cleanup_step(c, p_cutoff, max)
    }))
}

/// One batch of the metrics purge. `{"deleted", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn log_metrics_purge_step_v1(p_cutoff: TimestampWithTimeZone, p_max_rows: i32) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&sql::spi(|c| cleanup::metrics_purge_step(c, p_cutoff, max)))
}

/// One batch of the watermark walk after `p_after_id`.
#[pg_extern(schema = "queen_internal")]
fn retention_watermark_walk_v1(p_after_id: i64, p_max_rows: default!(i32, 5000)) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&sql::spi(|c| watermark::walk_batch(c, p_after_id, max)))
}

/// Runs one whole retention cycle in this session (no lease is taken; every
/// step runs inside the calling transaction). Answers the cycle's report.
#[pg_extern(schema = "queen_internal")]
fn retention_run_cycle() -> JsonOut {
    let settings = cycle::Settings::from_gucs();
    let report = cycle::run_cycle(&mut cycle::Inline, &settings, None)
        .unwrap_or_else(|e| errors::raise(&e.sqlstate, e.message));
    report.log();
    JsonOut::of(&report)
}

/// Claims a maintenance task for `p_lease_ms`: the fencing token, or NULL
/// when it is not due, leased, or disabled.
#[pg_extern(schema = "queen_internal")]
fn maintenance_claim_v1(p_task: &str, p_holder: &str, p_lease_ms: i64) -> Option<i64> {
    if p_lease_ms <= 0 {
        errors::invalid("p_lease_ms", format!("{p_lease_ms} must be positive"));
    }
    sql::spi(|c| lease::claim(c, p_task, p_holder, p_lease_ms))
}

/// Releases a claim: `p_period_ms` advances the schedule by one period (0:
/// never again), NULL leaves the task due (the run failed). False when the
/// token was fenced off.
#[pg_extern(schema = "queen_internal")]
fn maintenance_release_v1(p_task: &str, p_token: i64, p_period_ms: Option<i64>) -> bool {
    sql::spi(|c| lease::release(c, p_task, p_token, p_period_ms))
}

/// Why a queue's disk does (not) shrink, per partition.
#[pg_extern]
fn retention_explain(queue: &str, max_partitions: default!(i32, 100)) -> JsonOut {
    JsonOut::of(&sql::spi(|c| explain::explain(c, queue, max_partitions)))
}

/// Deleted messages per rule and time bucket since `since`.
#[pg_extern]
fn retention_timeseries(since: TimestampWithTimeZone, bucket: default!(&str, "'hour'")) -> JsonOut {
    JsonOut::of(&sql::spi(|c| explain::timeseries(c, since, bucket)))
}

/// Sizes of the largest tables of the queen schema.
#[pg_extern]
fn table_sizes() -> JsonOut {
    JsonOut::of(&sql::spi(explain::table_sizes))
}
