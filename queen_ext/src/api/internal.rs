//! The maintenance steps and cycles the workers run, callable from SQL by
//! `queen_admin` (schema `queen_internal`, apart from the public API).

use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

use crate::engine::dlq;
use crate::kv::prune;
use crate::maintenance::retention::{cleanup, cycle, lease, step, watermark};
use crate::maintenance::sweeper::drain;
use crate::maintenance::unit::Inline;
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi;
use crate::wire::datum::JsonOut;

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
    as_jsonb(&spi::spi(|c| {
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
    as_jsonb(&spi::spi(|c| {
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
    as_jsonb(&spi::spi(|c| {
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
    as_jsonb(&spi::spi(|c| {
        cleanup::partition_cleanup_step(c, p_cutoff, max)
    }))
}

/// One batch of the metrics purge. `{"deleted", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn log_metrics_purge_step_v1(p_cutoff: TimestampWithTimeZone, p_max_rows: i32) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&spi::spi(|c| cleanup::metrics_purge_step(c, p_cutoff, max)))
}

/// One metrics sample, as the metrics task takes it: the message path's
/// counters added to the minute's rows, and the database sampled.
/// `{"queues", "workers", "systems", "skipped"}` (skipped: the schema has
/// no series tables).
#[pg_extern(schema = "queen_internal")]
fn metrics_sample() -> JsonB {
    as_jsonb(&spi::spi(crate::maintenance::metrics::sample::sample))
}

/// One batch of the watermark walk after `p_after_id`.
#[pg_extern(schema = "queen_internal")]
fn retention_watermark_walk_v1(p_after_id: i64, p_max_rows: default!(i32, 5000)) -> JsonB {
    let max = check_max_rows(p_max_rows);
    as_jsonb(&spi::spi(|c| watermark::walk_batch(c, p_after_id, max)))
}

/// Runs one whole retention cycle in this session (no lease is taken; every
/// step runs inside the calling transaction). Answers the cycle's report.
#[pg_extern(schema = "queen_internal")]
fn retention_run_cycle() -> JsonOut {
    let settings = cycle::Settings::from_gucs();
    let report = cycle::run_cycle(&mut Inline, &settings, None)
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
    spi::spi(|c| lease::claim(c, p_task, p_holder, p_lease_ms))
}

/// Releases a claim: `p_period_ms` advances the schedule by one period (0:
/// never again), NULL leaves the task due (the run failed). False when the
/// token was fenced off.
#[pg_extern(schema = "queen_internal")]
fn maintenance_release_v1(p_task: &str, p_token: i64, p_period_ms: Option<i64>) -> bool {
    spi::spi(|c| lease::release(c, p_task, p_token, p_period_ms))
}

/// One batch of DLQ retention for a queue. `{"deleted", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn log_dlq_purge_step_v1(
    p_queue_id: i64,
    p_cutoff: TimestampWithTimeZone,
    p_max_rows: i32,
) -> pgrx::JsonB {
    if p_max_rows <= 0 {
        errors::invalid("p_max_rows", format!("{p_max_rows} must be at least 1"));
    }
    let deleted = spi::spi(|c| dlq::purge_step(c, p_queue_id, p_cutoff, p_max_rows));
    pgrx::JsonB(json!({"deleted": deleted, "done": deleted < p_max_rows as i64}))
}

/// One prune pass: `{"deleted", "expiredPresent", "countCapped"}`.
#[pg_extern(schema = "queen_internal")]
fn kv_expire_step_v1(
    p_start_shard: default!(i32, 0),
    p_batch: default!(Option<i32>, "NULL"),
) -> JsonOut {
    let batch = p_batch.unwrap_or_else(settings::kv_expire_batch);
    if batch <= 0 {
        errors::invalid("p_batch", "must be positive");
    }
    let r =
        spi::spi(|c| prune::expire_step(c, p_start_shard, batch, settings::kv_expired_count_max()));
    crate::maintenance::sweeper::metrics::pruned(
        r["deleted"].as_i64().unwrap_or(0),
        r["expiredPresent"].as_i64().unwrap_or(0),
    );
    JsonOut::of(&r)
}

/// The usage rollup, every page in this transaction.
#[pg_extern(schema = "queen_internal")]
fn kv_usage_rollup_v1() -> JsonOut {
    let batch = settings::kv_usage_batch();
    JsonOut::of(&spi::spi(|c| {
        let mut r = prune::Rollup::new();
        while !r.done {
            r.page(c, batch);
        }
        let out = r.write(c);
        crate::maintenance::sweeper::metrics::rolled_up();
        out
    }))
}

/// The probe: next due instant, due count and lateness, from one now().
#[pg_extern(schema = "queen_internal")]
fn sweeper_probe_v1() -> JsonOut {
    JsonOut::of(&spi::spi(|c| drain::probe(c, false)))
}

/// Claims up to `p_batch` due timers from shard `p_start_shard` on for
/// `p_lease_ms`: `{"token", "claimed"}`.
#[pg_extern(schema = "queen_internal")]
fn sweeper_claim_v1(p_start_shard: i32, p_batch: i32, p_lease_ms: i32) -> JsonOut {
    if p_batch <= 0 || p_lease_ms <= 0 {
        errors::invalid("p_batch", "batch and lease must be positive");
    }
    JsonOut::of(&spi::spi(|c| {
        drain::claim(c, p_start_shard, p_batch, p_lease_ms, false).json()
    }))
}

/// Fires the timers claimed under `p_token`, at most `p_max_bytes` of
/// payload: `{"fired", "bytes", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn sweeper_fire_v1(p_token: &str, p_max_bytes: default!(Option<i64>, "NULL")) -> JsonOut {
    let token = crate::wire::json::parse_uuid("p_token", p_token);
    let max = p_max_bytes.unwrap_or(settings::sweeper_max_fire_bytes());
    JsonOut::of(&spi::spi(|c| drain::fire(c, token, max)))
}

/// One sweep step from SQL: one claim of up to `queen.sweeper_claim_batch`
/// due timers and their fires, in the caller's transaction. Answers what
/// it did.
#[pg_extern(schema = "queen_internal")]
fn sweeper_run_once() -> JsonOut {
    let settings = drain::Settings::from_gucs();
    JsonOut::of(
        &drain::run_once(&settings, 0).unwrap_or_else(|e| errors::raise(&e.sqlstate, e.message)),
    )
}

fn check_max_rows(max_rows: i32) -> i32 {
    if max_rows <= 0 {
        errors::invalid("p_max_rows", format!("{max_rows} must be at least 1"));
    }
    max_rows
}

fn as_jsonb<T: serde::Serialize>(v: &T) -> JsonB {
    JsonB(serde_json::to_value(v).expect("results serialize"))
}
