//! One retention cycle: the work list, then the phases, each step its own
//! unit of work (its own transaction when a worker runs it).
//!
//!   phase 1  retention rules 1 and 2, per due partition, looped until done
//!   phase 2  sidecar (log_txns) purge, per due partition, looped until done
//!   phase 3  maxWaitTimeSeconds eviction, per due partition, looped until done
//!   phase 4  empty-partition cleanup, batched, at most once a minute
//!   phase 5  metrics purge, batched
//!   phase 6  compaction of cursor states and ephemeral rows, batched (`compact`)
//!   phase 7  idle ephemeral groups and queues, batched (`idle`)

use std::time::Instant;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;
use serde::Serialize;

use super::cleanup::{metrics_purge_step, partition_cleanup_step};
use super::compact;
use super::lease;
use super::step::{retention_step, txns_purge_step, StepResult};
use super::work_list::{self, WorkList};
use crate::maintenance::unit::{Failure, Runner};
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::query;

/// The settings of one cycle, read once at its start.
#[derive(Debug, Clone)]
pub struct Settings {
    pub batch: i32,
    pub due_cap: i64,
    pub cleanup_enabled: bool,
    pub cleanup_days: i32,
    pub metrics_days: i32,
    pub lease_ms: i64,
    pub compact_max: i64,
    pub compact_batch: i32,
    pub ephemeral_compact_max: i64,
    pub timers_compact_max: i64,
}

impl Settings {
    pub fn from_gucs() -> Settings {
        Settings {
            batch: settings::retention_batch_size(),
            due_cap: settings::retention_due_cap(),
            cleanup_enabled: settings::partition_cleanup_enabled(),
            cleanup_days: settings::partition_cleanup_days(),
            metrics_days: settings::metrics_retention_days(),
            lease_ms: settings::maintenance_lease_ms(),
            compact_max: settings::retention_compact_max(),
            compact_batch: settings::retention_compact_batch(),
            ephemeral_compact_max: settings::ephemeral_compact_max(),
            timers_compact_max: settings::timers_compact_max(),
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
    pub states_compacted: i64,
    /// Rows of ephemeral queues the compaction deleted.
    pub ephemeral_compacted: i64,
    /// Their compaction waited for a snapshot held open elsewhere to end.
    pub ephemeral_compaction_deferred: bool,
    /// The compaction waited for a snapshot held open elsewhere to end.
    pub compaction_deferred: bool,
    /// Rows of fired timers the compaction deleted.
    pub timers_compacted: i64,
    /// Their compaction waited for a snapshot held open elsewhere to end.
    pub timers_compaction_deferred: bool,
    /// Ephemeral consumer groups forgotten (no pop named them for
    /// `queen.ephemeral_group_idle_seconds`).
    pub ephemeral_groups_forgotten: i64,
    /// Empty implicit ephemeral queues removed.
    pub ephemeral_queues_removed: i64,
    #[serde(flatten)]
    pub failures: Failed,
    pub elapsed_ms: u128,
}

/// Units of work that failed in a cycle (a partition's phase, a queue's DLQ
/// purge, a cleanup batch); the others went on.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Failed {
    pub failed: usize,
    /// The first [`FAILING_NAMED`] of them, with their errors.
    pub failing: Vec<String>,
}

impl Failed {
    pub fn add(&mut self, what: String, f: &Failure) {
        self.failed += 1;
        if self.failing.len() < FAILING_NAMED {
            self.failing.push(format!("{what}: {f}"));
        }
    }

    pub fn extend(&mut self, failed: usize, named: Vec<String>) {
        self.failed += failed;
        let room = FAILING_NAMED.saturating_sub(self.failing.len());
        self.failing.extend(named.into_iter().take(room));
    }
}

impl Report {
    pub fn deleted_something(&self) -> bool {
        self.segments_deleted
            + self.txns_purged
            + self.max_wait_evicted
            + self.dlq_pruned
            + self.partitions_deleted
            + self.metrics_purged
            + self.states_compacted
            + self.ephemeral_compacted
            + self.timers_compacted
            + self.ephemeral_groups_forgotten
            + self.ephemeral_queues_removed
            > 0
    }

    /// The line is at LOG when the cycle deleted something or something
    /// failed, else at DEBUG1. A failing partition is backed off for a
    /// doubling number of cycles, so it is named at most once per backoff.
    pub fn log(&self) {
        let f = &self.failures;
        let failing = if f.failed > 0 {
            format!(" failing=[{}]", f.failing.join("; "))
        } else {
            String::new()
        };
        let line = format!(
            "retention swept queues={} due={} backed_off={} segments_deleted={} txns_purged={} max_wait_evicted={} dlq_pruned={} partitions_deleted={} metrics_purged={} states_compacted={} ephemeral_compacted={} timers_compacted={}{} ephemeral_groups_forgotten={} ephemeral_queues_removed={} failed={}{failing} elapsed_ms={}",
            self.queues,
            self.due,
            self.backed_off,
            self.segments_deleted,
            self.txns_purged,
            self.max_wait_evicted,
            self.dlq_pruned,
            self.partitions_deleted,
            self.metrics_purged,
            self.states_compacted,
            self.ephemeral_compacted,
            self.timers_compacted,
            if self.compaction_deferred
                || self.ephemeral_compaction_deferred
                || self.timers_compaction_deferred
            {
                " (compaction deferred: a snapshot is held)"
            } else {
                ""
            },
            self.ephemeral_groups_forgotten,
            self.ephemeral_queues_removed,
            f.failed,
            self.elapsed_ms
        );
        if self.deleted_something() || f.failed > 0 {
            pgrx::log!("{line}");
        } else {
            pgrx::debug1!("{line}");
        }
    }
}

/// The longest a fruitless or failing partition is skipped, in cycles. Not
/// measured: at the default 5 s cadence, about five minutes.
const MAX_BACKOFF_CYCLES: i32 = 64;

/// Failing units a cycle's report names (the rest are counted).
pub const FAILING_NAMED: usize = 5;

/// Immediate retries of a step that lost a race (40001, 40P01) before it
/// counts as failed. Not measured: a lost race is rare and the next attempt
/// sees the winner's commit.
const RACE_RETRIES: usize = 3;

/// The phase number DLQ retention's failures are kept under, keyed by queue.
pub const DLQ_PHASE: i16 = 4;

fn cutoffs(
    client: &mut SpiClient<'_>,
    cleanup_days: i32,
    metrics_days: i32,
) -> (TimestampWithTimeZone, TimestampWithTimeZone) {
    let row = exec(
        client,
        query!("retention_cycle_cutoffs"),
        &[spi::INT4, spi::INT4],
        &[cleanup_days.into(), metrics_days.into()],
    )
    .next()
    .unwrap();
    (spi::col(&row, "cleanup"), spi::col(&row, "metrics"))
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
    /// It failed in an earlier cycle (its error is kept until it succeeds).
    pub failing: bool,
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

/// Runs one unit, again (at most [`RACE_RETRIES`] times) when it lost a race.
fn run_retrying<R: Runner, T>(
    runner: &mut R,
    mut f: impl FnMut(&mut SpiClient<'_>) -> T,
) -> Result<T, Failure> {
    let mut lost = 0;
    loop {
        match runner.run(&mut f) {
            Err(e) if e.is_retry() && lost < RACE_RETRIES => lost += 1,
            other => return other,
        }
    }
}

/// Loops a per-partition step until it reports done (or deletes nothing).
fn drain<R: Runner>(
    runner: &mut R,
    mut step: impl FnMut(&mut SpiClient<'_>) -> StepResult,
) -> Result<StepResult, Failure> {
    let mut total = StepResult {
        deleted: 0,
        messages: 0,
        new_log_start: None,
        new_txns_start: None,
        done: true,
        redone: false,
    };
    loop {
        let r = run_retrying(runner, &mut step)?;
        total.deleted += r.deleted;
        total.messages += r.messages;
        if r.done || r.deleted == 0 {
            return Ok(total);
        }
    }
}

/// Runs one item to completion, and keeps the backoff of a phase-1
/// partition: a fruitless visit doubles its skip, a fruitful one clears it.
pub fn process<R: Runner>(runner: &mut R, item: &Item, batch: i32) -> Result<Tally, Failure> {
    let mut t = Tally::default();
    match item.phase {
        1 => {
            let r = drain(runner, |c| {
                retention_step(
                    c,
                    item.pid,
                    item.all_cutoff,
                    item.completed_cutoff,
                    batch,
                    None,
                )
            })?;
            t.segments = r.deleted;
            t.messages = r.messages;
            let fruitless = r.deleted == 0;
            runner.run(|c| {
                if fruitless {
                    exec(
                        c,
                        query!("retention_cycle_process"),
                        &[spi::INT8, spi::INT4],
                        &[item.pid.into(), MAX_BACKOFF_CYCLES.into()],
                    );
                } else {
                    exec(
                        c,
                        "DELETE FROM queen.retention_backoff WHERE partition_id = $1",
                        &[spi::INT8],
                        &[item.pid.into()],
                    );
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
                let r = drain(runner, |c| {
                    retention_step(
                        c,
                        item.pid,
                        Some(cutoff),
                        None,
                        batch,
                        Some("max_wait_time_eviction"),
                    )
                })?;
                t.evicted = r.messages;
            }
        }
    }
    Ok(t)
}

/// Records a failed unit of work (a partition's phase, or a queue's DLQ
/// purge under [`DLQ_PHASE`]): it is skipped for a doubling number of
/// cycles, and its error is kept for `retention_explain` until it succeeds.
fn record_failure(client: &mut SpiClient<'_>, key: i64, phase: i16, f: &Failure) {
    exec(
        client,
        query!("retention_cycle_record_failure"),
        &[spi::INT8, spi::INT2, spi::TEXT, spi::TEXT, spi::INT4],
        &[
            key.into(),
            phase.into(),
            f.sqlstate.as_str().into(),
            f.message.as_str().into(),
            MAX_BACKOFF_CYCLES.into(),
        ],
    );
}

fn clear_failure(client: &mut SpiClient<'_>, key: i64, phase: i16) {
    exec(
        client,
        query!("retention_cycle_clear_failure"),
        &[spi::INT8, spi::INT2],
        &[key.into(), phase.into()],
    );
}

/// Runs one unit of work through `f`, isolated: a failure that is the
/// unit's own (not the server's, see [`Failure::stops_the_cycle`]) is
/// recorded and counted, and the cycle goes on. A unit that had failed
/// before and now succeeds has its error cleared.
pub fn isolated<R: Runner, T: Default>(
    runner: &mut R,
    (key, phase, failing): (i64, i16, bool),
    what: impl FnOnce() -> String,
    failed: &mut Failed,
    f: impl FnOnce(&mut R) -> Result<T, Failure>,
) -> Result<T, Failure> {
    match f(runner) {
        Ok(t) => {
            if failing {
                runner.run(|c| clear_failure(c, key, phase))?;
            }
            Ok(t)
        }
        Err(e) if e.stops_the_cycle() => Err(e),
        Err(e) => {
            runner.run(|c| record_failure(c, key, phase, &e))?;
            failed.add(what(), &e);
            Ok(T::default())
        }
    }
}

/// Runs one due item, isolated (see [`isolated`]).
pub fn process_isolated<R: Runner>(
    runner: &mut R,
    item: &Item,
    batch: i32,
    failed: &mut Failed,
) -> Result<Tally, Failure> {
    isolated(
        runner,
        (item.pid, item.phase, item.failing),
        || format!("partition {} phase {}", item.pid, item.phase),
        failed,
        |r| process(r, item, batch),
    )
}

/// What a cycle will do: the items in phase order, the DLQ purges, and what
/// backoff skips.
struct Plan {
    items: Vec<Item>,
    /// (queue, whether its purge failed before).
    dlq: Vec<(i64, bool)>,
    skipped: usize,
}

/// Counts this cycle's backoffs down: the due partitions that fruitless
/// steps put off (phase 1), and per (key, phase) whether a failing unit is
/// skipped this cycle. Entries of units no longer due go, so both tables
/// stay bounded by the due cap.
fn backoffs(
    client: &mut SpiClient<'_>,
    list: &WorkList,
) -> (Vec<i64>, std::collections::HashMap<(i64, i16), bool>) {
    let due: Vec<i64> = list.phases[0].iter().map(|(p, _)| *p).collect();
    // Entries of partitions that are no longer due go: the table stays
    // bounded by the due cap.
    exec(
        client,
        "DELETE FROM queen.retention_backoff WHERE partition_id <> ALL($1)",
        &[spi::INT8_ARRAY],
        &[due.clone().into()],
    );
    let skipped: Vec<i64> = exec(
        client,
        query!("retention_cycle_count_down"),
        &[spi::INT8_ARRAY],
        &[due.into()],
    )
    .map(|r| spi::col::<i64>(&r, "partition_id"))
    .collect();
    // Failures of units no longer due go, as backoff entries do.
    let (mut keys, mut phases): (Vec<i64>, Vec<i16>) = (Vec::new(), Vec::new());
    for (phase, list_phase) in list.phases.iter().enumerate() {
        for &(pid, _) in list_phase {
            keys.push(pid);
            phases.push(phase as i16 + 1);
        }
    }
    for &queue in &list.dlq_due {
        keys.push(queue);
        phases.push(DLQ_PHASE);
    }
    exec(
        client,
        query!("retention_cycle_forget_failures"),
        &[spi::INT8_ARRAY, spi::INT2_ARRAY],
        &[keys.into(), phases.into()],
    );
    // (key, phase) -> whether it is skipped this cycle: the SELECT reads the
    // rows as they were before the statement's own UPDATE counted the skips
    // down (a data-modifying CTE's changes are not visible to the rest of
    // its statement), so `skip > 0` is the skip this cycle consumed.
    let failing: std::collections::HashMap<(i64, i16), bool> =
        exec(client, query!("retention_cycle_failures"), &[], &[])
            .map(|r| {
                (
                    (
                        spi::col::<i64>(&r, "partition_id"),
                        spi::col::<i16>(&r, "phase"),
                    ),
                    spi::col::<bool>(&r, "skipped"),
                )
            })
            .collect();
    (skipped, failing)
}

/// The items of a work list, in phase order, minus the phase-1 partitions
/// that are backing off and the units that failed and are backing off
/// (whose skips count down here).
fn plan(client: &mut SpiClient<'_>, list: &WorkList) -> Plan {
    let (skipped, failing) = backoffs(client, list);
    let mut skipped_count = skipped.len();
    let mut items = Vec::with_capacity(list.due());
    for (phase, list_phase) in list.phases.iter().enumerate() {
        for &(pid, queue) in list_phase {
            let rule = list.rules[&queue];
            let phase = phase as i16 + 1;
            if phase == 1 && skipped.contains(&pid) {
                continue;
            }
            let failed_before = failing.get(&(pid, phase)).copied();
            if failed_before == Some(true) {
                skipped_count += 1;
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
                failing: failed_before.is_some(),
            });
        }
    }
    let mut dlq = Vec::with_capacity(list.dlq_due.len());
    for &queue in &list.dlq_due {
        match failing.get(&(queue, DLQ_PHASE)) {
            Some(true) => skipped_count += 1,
            before => dlq.push((queue, before.is_some())),
        }
    }
    Plan {
        items,
        dlq,
        skipped: skipped_count,
    }
}

/// Runs the per-partition phases over `items` with more step workers than
/// this one; answers what all of them did. Provided by the worker.
pub type FanOut<'a> = &'a mut dyn FnMut(&[Item], &mut Failed) -> Result<Tally, Failure>;

pub fn run_cycle<R: Runner>(
    runner: &mut R,
    s: &Settings,
    fan_out: Option<FanOut<'_>>,
) -> Result<Report, Failure> {
    let started = Instant::now();
    let list: WorkList = runner.run(|c| work_list::build(c, s.due_cap))?;
    let Plan {
        items,
        dlq,
        skipped,
    } = runner.run(|c| plan(c, &list))?;
    let mut report = Report {
        queues: list.rules.len(),
        due: list.due(),
        backed_off: skipped,
        ..Report::default()
    };

    // Phases 1 to 3.
    partition_phases(runner, s, &items, fan_out, &mut report)?;

    // DLQ retention, per due queue, in batches; each batch counts what it
    // removed in the same transaction.
    for (queue, failing) in dlq {
        let Some(cutoff) = list.rules.get(&queue).and_then(|r| r.dlq_cutoff) else {
            continue;
        };
        report.dlq_pruned += dlq_purge(runner, s, (queue, failing, cutoff), &mut report.failures)?;
    }

    let (cleanup_cutoff, metrics_cutoff) =
        runner.run(|c| cutoffs(c, s.cleanup_days, s.metrics_days))?;

    // Phase 4: empty partitions, on their own one-minute clock.
    if s.cleanup_enabled {
        partition_cleanup(runner, s, cleanup_cutoff, &mut report)?;
    }
    // Phase 5: observability rows.
    metrics_purge(runner, s, metrics_cutoff, &mut report)?;
    // Phase 6: the cursor states pops, acks and renewals replaced, the rows
    // ephemeral queues left behind, and fired timers.
    compaction(runner, s, &mut report)?;
    // Phase 7: idle ephemeral groups and queues.
    match super::idle::expire(runner) {
        Ok(done) => {
            report.ephemeral_groups_forgotten = done.groups;
            report.ephemeral_queues_removed = done.queues;
        }
        Err(e) if e.stops_the_cycle() => return Err(e),
        Err(e) => report.failures.add("ephemeral expiry".into(), &e),
    }
    report.elapsed_ms = started.elapsed().as_millis();
    crate::maintenance::sweeper::metrics::retention_cycle(report.due, report.backed_off);
    Ok(report)
}

/// Phases 1 to 3: every due item, through `fan_out` when it is given and
/// there are several, else one after the other here.
fn partition_phases<R: Runner>(
    runner: &mut R,
    s: &Settings,
    items: &[Item],
    fan_out: Option<FanOut<'_>>,
    report: &mut Report,
) -> Result<(), Failure> {
    let tally = match fan_out {
        Some(f) if items.len() > 1 => f(items, &mut report.failures)?,
        _ => {
            let mut t = Tally::default();
            for item in items {
                t.add(process_isolated(
                    runner,
                    item,
                    s.batch,
                    &mut report.failures,
                )?);
            }
            t
        }
    };
    report.segments_deleted = tally.segments;
    report.messages_deleted = tally.messages;
    report.txns_purged = tally.txns;
    report.max_wait_evicted = tally.evicted;
    Ok(())
}

/// DLQ retention of one queue (`queue`, whether its purge failed before,
/// and its cutoff), isolated (see [`isolated`]): batches until one removes
/// fewer than a batch. Answers how many went.
fn dlq_purge<R: Runner>(
    runner: &mut R,
    s: &Settings,
    (queue, failing, cutoff): (i64, bool, TimestampWithTimeZone),
    failed: &mut Failed,
) -> Result<i64, Failure> {
    let what = || format!("queue {queue} dead-letter purge");
    isolated(runner, (queue, DLQ_PHASE, failing), what, failed, |r| {
        let mut pruned = 0;
        loop {
            let n = run_retrying(r, |c| {
                crate::engine::dlq::purge_step(c, queue, cutoff, s.batch)
            })?;
            pruned += n;
            if n < s.batch as i64 {
                return Ok(pruned);
            }
        }
    })
}

/// Phase 6: the compaction of cursor states, ephemeral rows and fired
/// timers (`compact`). A failure here is reported, not fatal.
fn compaction<R: Runner>(runner: &mut R, s: &Settings, report: &mut Report) -> Result<(), Failure> {
    match compact::compact(
        runner,
        s.compact_batch,
        s.compact_max,
        s.ephemeral_compact_max,
        s.timers_compact_max,
    ) {
        Ok(done) => {
            report.timers_compacted = done.timers;
            report.timers_compaction_deferred = done.timers_deferred;
            report.states_compacted = done.deleted;
            report.ephemeral_compacted = done.ephemeral;
            report.ephemeral_compaction_deferred = done.ephemeral_deferred;
            report.compaction_deferred = done.deferred;
        }
        Err(e) if e.stops_the_cycle() => return Err(e),
        Err(e) => report.failures.add("cursor-state compaction".into(), &e),
    }
    Ok(())
}

/// Phase 4: the empty partitions past `queen.partition_cleanup_days`, under
/// their own lease and one-minute period.
fn partition_cleanup<R: Runner>(
    runner: &mut R,
    s: &Settings,
    cleanup_cutoff: TimestampWithTimeZone,
    report: &mut Report,
) -> Result<(), Failure> {
    let holder = format!("pid {}", std::process::id());
    if let Some(token) =
        runner.run(|c| lease::claim(c, lease::PARTITION_CLEANUP, &holder, s.lease_ms))?
    {
        let outcome = loop {
            match runner.run(|c| partition_cleanup_step(c, cleanup_cutoff, s.batch)) {
                Ok(r) => {
                    report.partitions_deleted += r.deleted;
                    if r.done {
                        break Ok(());
                    }
                }
                Err(e) => break Err(e),
            }
        };
        // A failed run leaves the task due: the next cycle tries again.
        let period = outcome.is_ok().then_some(CLEANUP_PERIOD_MS);
        runner.run(|c| lease::release(c, lease::PARTITION_CLEANUP, token, period))?;
        match outcome {
            Err(e) if e.stops_the_cycle() => return Err(e),
            Err(e) => report.failures.add("empty-partition cleanup".into(), &e),
            Ok(()) => {}
        }
    }
    Ok(())
}

/// Phase 5: observability rows. A failure here is reported, not fatal: the
/// deletes before it have committed step by step.
fn metrics_purge<R: Runner>(
    runner: &mut R,
    s: &Settings,
    metrics_cutoff: TimestampWithTimeZone,
    report: &mut Report,
) -> Result<(), Failure> {
    loop {
        match runner.run(|c| metrics_purge_step(c, metrics_cutoff, s.batch)) {
            Ok(r) => {
                report.metrics_purged += r.deleted;
                if r.done {
                    break;
                }
            }
            Err(e) => {
                if e.stops_the_cycle() {
                    return Err(e);
                }
                report.failures.add("metrics purge".into(), &e);
                break;
            }
        }
    }
    Ok(())
}

/// Empty-partition cleanup runs at most once per this period.
pub const CLEANUP_PERIOD_MS: i64 = 60_000;
