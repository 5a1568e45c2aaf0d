//! One retention cycle: the work list, then the phases, each step its own
//! unit of work (its own transaction when a worker runs it).
//!
//!   phase 1  retention rules 1 and 2, per due partition, looped until done
//!   phase 2  sidecar (log_txns) purge, per due partition, looped until done
//!   phase 3  maxWaitTimeSeconds eviction, per due partition, looped until done
//!   phase 4  empty-partition cleanup, batched, at most once a minute
//!   phase 5  metrics purge, batched

use std::cell::RefCell;
use std::collections::HashMap;
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
    pub partitions_deleted: i64,
    pub metrics_purged: i64,
    pub elapsed_ms: u128,
}

impl Report {
    pub fn deleted_something(&self) -> bool {
        self.segments_deleted + self.txns_purged + self.max_wait_evicted + self.partitions_deleted + self.metrics_purged > 0
    }

    pub fn log(&self) {
        let line = format!(
            "retention swept queues={} due={} backed_off={} segments_deleted={} txns_purged={} max_wait_evicted={} partitions_deleted={} metrics_purged={} elapsed_ms={}",
            self.queues,
            self.due,
            self.backed_off,
            self.segments_deleted,
            self.txns_purged,
            self.max_wait_evicted,
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

/// Backoff of phase-1 partitions that were due by age and deleted nothing
/// (cursor-capped): skipped for a doubling number of cycles.
#[derive(Debug, Clone, Copy)]
struct Backoff {
    skip: u32,
    streak: u32,
}

/// The longest a fruitless partition is skipped, in cycles. Not measured: at
/// the default 5 s cadence, about five minutes.
const MAX_BACKOFF_CYCLES: u32 = 64;

thread_local! {
    static BACKOFF: RefCell<HashMap<i64, Backoff>> = RefCell::new(HashMap::new());
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

pub fn run_cycle<R: Runner>(runner: &mut R, s: &Settings) -> Result<Report, String> {
    let started = Instant::now();
    let list: WorkList = runner.run(|c| work_list::build(c, s.due_cap))?;
    let mut report = Report { queues: list.rules.len(), due: list.due(), ..Report::default() };

    // Phase 1: rules 1 and 2.
    let mut seen = Vec::with_capacity(list.phases[0].len());
    for &(pid, queue) in &list.phases[0] {
        seen.push(pid);
        let skip = BACKOFF.with(|b| {
            let mut b = b.borrow_mut();
            match b.get_mut(&pid) {
                Some(e) if e.skip > 0 => {
                    e.skip -= 1;
                    true
                }
                _ => false,
            }
        });
        if skip {
            report.backed_off += 1;
            continue;
        }
        let rule = list.rules[&queue];
        let r = drain(runner, |c| retention_step(c, pid, rule.all_cutoff, rule.completed_cutoff, s.batch, None))?;
        report.segments_deleted += r.deleted;
        report.messages_deleted += r.messages;
        BACKOFF.with(|b| {
            let mut b = b.borrow_mut();
            if r.deleted == 0 {
                let e = b.entry(pid).or_insert(Backoff { skip: 0, streak: 0 });
                e.streak = (e.streak + 1).min(31);
                e.skip = (1u32 << (e.streak - 1)).min(MAX_BACKOFF_CYCLES);
            } else {
                b.remove(&pid);
            }
        });
    }
    // Only partitions still due keep a backoff entry: the map stays bounded
    // by the due cap.
    BACKOFF.with(|b| b.borrow_mut().retain(|pid, _| seen.contains(pid)));

    // Phase 2: the sidecar.
    for &(pid, queue) in &list.phases[1] {
        let Some(cutoff) = list.rules[&queue].txn_cutoff else { continue };
        let r = drain(runner, |c| txns_purge_step(c, pid, cutoff, s.batch))?;
        report.txns_purged += r.deleted;
    }

    // Phase 3: max-wait eviction (rule 2 off, whatever retentionEnabled says).
    for &(pid, queue) in &list.phases[2] {
        let Some(cutoff) = list.rules[&queue].max_wait_cutoff else { continue };
        let r = drain(runner, |c| retention_step(c, pid, Some(cutoff), None, s.batch, Some("max_wait_time_eviction")))?;
        report.max_wait_evicted += r.messages;
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
