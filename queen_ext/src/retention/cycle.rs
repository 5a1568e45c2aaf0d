//! One retention cycle: the work list, then the phases, each step its own
//! unit of work (its own transaction when a worker runs it).
//!
//!   phase 1  retention rules 1 and 2, per due partition, looped until done
//!   phase 2  sidecar (log_txns) purge, per due partition, looped until done
//!   phase 3  maxWaitTimeSeconds eviction, per due partition, looped until done
//!   phase 4  empty-partition cleanup, batched, at most once a minute
//!   phase 5  metrics purge, batched

use std::time::Instant;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;
use serde::Serialize;

use super::cleanup::{metrics_purge_step, partition_cleanup_step};
use super::lease;
use super::step::{retention_step, txns_purge_step, StepResult};
use super::work_list::{self, WorkList};
use crate::guc;
use crate::sql::{self, exec};

/// Runs one unit of work: inline in the caller's transaction (SQL-driven),
/// or in a transaction of its own (a worker).
pub trait Runner {
    fn run<R>(&mut self, f: impl FnOnce(&mut SpiClient<'_>) -> R) -> Result<R, String>;
}

/// Runs everything in the calling backend's current transaction.
pub struct Inline;

impl Runner for Inline {
    fn run<R>(&mut self, f: impl FnOnce(&mut SpiClient<'_>) -> R) -> Result<R, String> {
        Ok(sql::spi(f))
    }
}

/// The settings of one cycle, read once at its start.
#[derive(Debug, Clone)]
pub struct Settings {
    pub batch: i32,
    pub due_cap: i64,
    pub cleanup_enabled: bool,
    pub cleanup_days: i32,
    pub metrics_days: i32,
    pub lease_ms: i64,
}

impl Settings {
    pub fn from_gucs() -> Settings {
        Settings {
            batch: guc::RETENTION_BATCH_SIZE.get(),
            due_cap: guc::retention_due_cap(),
            cleanup_enabled: guc::PARTITION_CLEANUP_ENABLED.get(),
            cleanup_days: guc::PARTITION_CLEANUP_DAYS.get().max(1),
            metrics_days: guc::METRICS_RETENTION_DAYS.get(),
            lease_ms: guc::MAINTENANCE_LEASE_MS.get() as i64,
        }
    }
}

/// What a cycle did; the fields of its log line.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Report {
    pub queues: usize,
    pub due: usize,
    pub backed_off: usize,
    pub segments_deleted: i64,
    pub messages_deleted: i64,
    pub txns_purged: i64,
    pub max_wait_evicted: i64,
    pub dlq_pruned: i64,
    pub partitions_deleted: i64,
    pub metrics_purged: i64,
    pub elapsed_ms: u128,
}

impl Report {
    pub fn deleted_something(&self) -> bool {
        self.segments_deleted + self.txns_purged + self.max_wait_evicted + self.dlq_pruned + self.partitions_deleted + self.metrics_purged
            > 0
    }

    pub fn log(&self) {
        let line = format!(
            "retention swept queues={} due={} backed_off={} segments_deleted={} txns_purged={} max_wait_evicted={} dlq_pruned={} partitions_deleted={} metrics_purged={} elapsed_ms={}",
            self.queues,
            self.due,
            self.backed_off,
            self.segments_deleted,
            self.txns_purged,
            self.max_wait_evicted,
            self.dlq_pruned,
            self.partitions_deleted,
            self.metrics_purged,
            self.elapsed_ms
        );
        if self.deleted_something() {
            pgrx::log!("{line}");
        } else {
            pgrx::debug1!("{line}");
        }
    }
}

/// The longest a fruitless partition is skipped, in cycles. Not measured: at
/// the default 5 s cadence, about five minutes.
const MAX_BACKOFF_CYCLES: i32 = 64;

fn cutoffs(client: &mut SpiClient<'_>, cleanup_days: i32, metrics_days: i32) -> (TimestampWithTimeZone, TimestampWithTimeZone) {
    let row = exec(
        client,
        "SELECT now() - make_interval(days => $1), now() - make_interval(days => $2)",
        &[sql::INT4, sql::INT4],
        &[cleanup_days.into(), metrics_days.into()],
    )
    .next()
    .unwrap();
    (row.get(1).unwrap().unwrap(), row.get(2).unwrap().unwrap())
}

/// One due partition of one phase, with the cutoffs its step needs.
#[derive(Debug, Clone, Copy)]
pub struct Item {
    pub phase: i16,
    pub pid: i64,
    pub all_cutoff: Option<TimestampWithTimeZone>,
    pub completed_cutoff: Option<TimestampWithTimeZone>,
    /// Phase 2: the sidecar cutoff; phase 3: the max-wait cutoff.
    pub cutoff: Option<TimestampWithTimeZone>,
}

/// What the per-partition phases did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub segments: i64,
    pub messages: i64,
    pub txns: i64,
    pub evicted: i64,
}

impl Tally {
    pub fn add(&mut self, o: Tally) {
        self.segments += o.segments;
        self.messages += o.messages;
        self.txns += o.txns;
        self.evicted += o.evicted;
    }
}

/// Loops a per-partition step until it reports done (or deletes nothing).
fn drain<R: Runner>(runner: &mut R, mut step: impl FnMut(&mut SpiClient<'_>) -> StepResult) -> Result<StepResult, String> {
    let mut total = StepResult { deleted: 0, messages: 0, new_log_start: None, new_txns_start: None, done: true };
    loop {
        let r = runner.run(&mut step)?;
        total.deleted += r.deleted;
        total.messages += r.messages;
        if r.done || r.deleted == 0 {
            return Ok(total);
        }
    }
}

/// Runs one item to completion, and keeps the backoff of a phase-1
/// partition: a fruitless visit doubles its skip, a fruitful one clears it.
pub fn process<R: Runner>(runner: &mut R, item: &Item, batch: i32) -> Result<Tally, String> {
    let mut t = Tally::default();
    match item.phase {
        1 => {
            let r = drain(runner, |c| retention_step(c, item.pid, item.all_cutoff, item.completed_cutoff, batch, None))?;
            t.segments = r.deleted;
            t.messages = r.messages;
            let fruitless = r.deleted == 0;
            runner.run(|c| {
                if fruitless {
                    exec(
                        c,
                        "INSERT INTO queen.retention_backoff AS b (partition_id, skip, streak) VALUES ($1, 1, 1)
                         ON CONFLICT (partition_id) DO UPDATE
                            SET streak = LEAST(b.streak + 1, 30),
                                skip = LEAST(power(2, LEAST(b.streak + 1, 30) - 1)::int, $2)",
                        &[sql::INT8, sql::INT4],
                        &[item.pid.into(), MAX_BACKOFF_CYCLES.into()],
                    );
                } else {
                    exec(c, "DELETE FROM queen.retention_backoff WHERE partition_id = $1", &[sql::INT8], &[item.pid.into()]);
                }
            })?;
        }
        2 => {
            if let Some(cutoff) = item.cutoff {
                t.txns = drain(runner, |c| txns_purge_step(c, item.pid, cutoff, batch))?.deleted;
            }
        }
        _ => {
            if let Some(cutoff) = item.cutoff {
                let r = drain(runner, |c| retention_step(c, item.pid, Some(cutoff), None, batch, Some("max_wait_time_eviction")))?;
                t.evicted = r.messages;
            }
        }
    }
    Ok(t)
}

/// The items of a work list, in phase order, minus the phase-1 partitions
/// that are backing off (whose skip counts down here). Answers the items and
/// how many were skipped.
fn plan(client: &mut SpiClient<'_>, list: &WorkList) -> (Vec<Item>, usize) {
    let due: Vec<i64> = list.phases[0].iter().map(|(p, _)| *p).collect();
    // Entries of partitions that are no longer due go: the table stays
    // bounded by the due cap.
    exec(client, "DELETE FROM queen.retention_backoff WHERE partition_id <> ALL($1)", &[sql::INT8_ARRAY], &[due.clone().into()]);
    let skipped: Vec<i64> = exec(
        client,
        "UPDATE queen.retention_backoff SET skip = skip - 1 WHERE partition_id = ANY($1) AND skip > 0 RETURNING partition_id",
        &[sql::INT8_ARRAY],
        &[due.into()],
    )
    .map(|r| r.get::<i64>(1).unwrap().unwrap())
    .collect();
    let mut items = Vec::with_capacity(list.due());
    for (phase, list_phase) in list.phases.iter().enumerate() {
        for &(pid, queue) in list_phase {
            let rule = list.rules[&queue];
            let phase = phase as i16 + 1;
            if phase == 1 && skipped.contains(&pid) {
                continue;
            }
            items.push(Item {
                phase,
                pid,
                all_cutoff: rule.all_cutoff,
                completed_cutoff: rule.completed_cutoff,
                cutoff: match phase {
                    2 => rule.txn_cutoff,
                    3 => rule.max_wait_cutoff,
                    _ => None,
                },
            });
        }
    }
    (items, skipped.len())
}

/// Runs the per-partition phases over `items` with more step workers than
/// this one; answers what all of them did. Provided by the worker.
pub type FanOut<'a> = &'a mut dyn FnMut(&[Item]) -> Result<Tally, String>;

pub fn run_cycle<R: Runner>(runner: &mut R, s: &Settings, fan_out: Option<FanOut<'_>>) -> Result<Report, String> {
    let started = Instant::now();
    let list: WorkList = runner.run(|c| work_list::build(c, s.due_cap))?;
    let (items, backed_off) = runner.run(|c| plan(c, &list))?;
    let mut report = Report { queues: list.rules.len(), due: list.due(), backed_off, ..Report::default() };

    // Phases 1 to 3.
    let tally = match fan_out {
        Some(f) if items.len() > 1 => f(&items)?,
        _ => {
            let mut t = Tally::default();
            for item in &items {
                t.add(process(runner, item, s.batch)?);
            }
            t
        }
    };
    report.segments_deleted = tally.segments;
    report.messages_deleted = tally.messages;
    report.txns_purged = tally.txns;
    report.max_wait_evicted = tally.evicted;

    // DLQ retention, per due queue, in batches; each batch counts what it
    // removed in the same transaction.
    for queue in &list.dlq_due {
        let Some(cutoff) = list.rules.get(queue).and_then(|r| r.dlq_cutoff) else { continue };
        loop {
            let n = runner.run(|c| crate::dlq::purge_step(c, *queue, cutoff, s.batch))?;
            report.dlq_pruned += n;
            if n < s.batch as i64 {
                break;
            }
        }
    }

    let (cleanup_cutoff, metrics_cutoff) = runner.run(|c| cutoffs(c, s.cleanup_days, s.metrics_days))?;

    // Phase 4: empty partitions, on their own one-minute clock.
    if s.cleanup_enabled {
        let holder = format!("pid {}", std::process::id());
        if let Some(token) = runner.run(|c| lease::claim(c, lease::PARTITION_CLEANUP, &holder, s.lease_ms))? {
            loop {
                match runner.run(|c| partition_cleanup_step(c, cleanup_cutoff, s.batch)) {
                    Ok(r) => {
                        report.partitions_deleted += r.deleted;
                        if r.done {
                            break;
                        }
                    }
                    Err(e) => {
                        runner.run(|c| lease::release(c, lease::PARTITION_CLEANUP, token, None))?;
                        return Err(e);
                    }
                }
            }
            runner.run(|c| lease::release(c, lease::PARTITION_CLEANUP, token, Some(CLEANUP_PERIOD_MS)))?;
        }
    }

    // Phase 5: observability rows. A failure here is reported, not fatal:
    // the deletes above have committed step by step.
    loop {
        match runner.run(|c| metrics_purge_step(c, metrics_cutoff, s.batch)) {
            Ok(r) => {
                report.metrics_purged += r.deleted;
                if r.done {
                    break;
                }
            }
            Err(e) => {
                pgrx::log!("retention metrics purge failed: {e}");
                break;
            }
        }
    }
    report.elapsed_ms = started.elapsed().as_millis();
    Ok(report)
}

/// Empty-partition cleanup runs at most once per this period.
pub const CLEANUP_PERIOD_MS: i64 = 60_000;
