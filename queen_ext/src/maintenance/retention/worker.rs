//! The maintenance background workers.
//!
//! `queen maintenance` (static, started from shared_preload_libraries) polls
//! the `queen.maintenance_leases` rows once per tenth of the retention
//! interval. When it claims `retention` it becomes the holder: it opens a
//! transaction whose only statement is `pg_try_advisory_xact_lock(737001)`
//! and that touches no table, starts a `queen retention cycle` dynamic worker
//! that runs the whole cycle on its own backend (every step its own
//! transaction), waits for it, ends the holder transaction (the lock goes
//! with it, on every exit path) and releases the claim. The cycle worker
//! reports its outcome in the lease row, fenced by the token.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, SignalWakeFlags};
use pgrx::prelude::*;
use pgrx::{pg_sys, IntoDatum};

use pgrx::datum::TimestampWithTimeZone;

use super::cycle::{self, Failed, Item, Tally};
use super::{lease, watermark};
use crate::maintenance::bgworker::{
    connect, exit_to_be_restarted, extension_present, in_own_transaction, in_own_transaction_coded,
    stopping, wait,
};
use crate::maintenance::unit::{Failure, OwnTransactions, Runner};
use crate::pg::errors::describe;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::query;

/// The advisory lock whose holder is sweeping (transaction scoped).
pub const RETENTION_LOCK: i64 = 737001;
/// Cycle errors are logged at most this often.
const ERROR_LOG_EVERY: Duration = Duration::from_secs(30);

pub fn register() {
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    BackgroundWorkerBuilder::new("queen maintenance")
        .set_function("queen_maintenance_main")
        .set_library("queen")
        .enable_spi_access()
        // A worker whose database does not exist yet exits; try again later.
        .set_restart_time(Some(Duration::from_secs(10)))
        .load();
}

struct Scheduler {
    holder: String,
    last_error_log: Option<Instant>,
}

impl Scheduler {
    fn log_error(&mut self, what: &str, e: &str) {
        if self
            .last_error_log
            .is_none_or(|t| t.elapsed() >= ERROR_LOG_EVERY)
        {
            pgrx::log!("{what} failed: {e}");
            self.last_error_log = Some(Instant::now());
        }
    }

    fn tick(&mut self) {
        if let Err(e) = self.watermark() {
            self.log_error("retention watermark walk", &e);
        }
        if let Err(e) = self.retention() {
            self.log_error("retention cycle", &e);
        }
        if let Err(e) = crate::maintenance::metrics::sample::run_task(&self.holder) {
            self.log_error("metrics sample", &e);
        }
    }

    /// The first backfill, then the safety walk every period.
    fn watermark(&mut self) -> Result<(), String> {
        let lease_ms = settings::maintenance_lease_ms();
        let Some(token) = in_own_transaction(|| {
            spi::spi(|c| lease::claim(c, lease::WATERMARK, &self.holder, lease_ms))
        })?
        else {
            return Ok(());
        };
        let mut after = 0i64;
        let mut fixed = 0i64;
        loop {
            match in_own_transaction(|| {
                spi::spi(|c| watermark::walk_batch(c, after, watermark::WALK_BATCH))
            }) {
                Ok(r) => {
                    fixed += r.fixed;
                    match r.last_id {
                        Some(id) if !r.done => after = id,
                        _ => break,
                    }
                }
                Err(e) => {
                    in_own_transaction(|| {
                        spi::spi(|c| lease::release(c, lease::WATERMARK, token, None))
                    })?;
                    return Err(e);
                }
            }
            if stopping() {
                return Ok(());
            }
        }
        if fixed > 0 {
            pgrx::log!("retention watermark walk fixed {fixed} partitions");
        }
        let period = settings::retention_safety_walk_ms();
        in_own_transaction(|| {
            spi::spi(|c| lease::release(c, lease::WATERMARK, token, Some(period)))
        })?;
        Ok(())
    }

    fn retention(&mut self) -> Result<(), String> {
        let lease_ms = settings::maintenance_lease_ms();
        let period = settings::retention_interval_ms();
        let Some(token) = in_own_transaction(|| {
            spi::spi(|c| lease::claim(c, lease::RETENTION, &self.holder, lease_ms))
        })?
        else {
            return Ok(());
        };
        // The holder transaction: one statement, no table.
        unsafe {
            pg_sys::SetCurrentStatementStartTimestamp();
            pg_sys::StartTransactionCommand();
        }
        // The statement's snapshot is popped at once: the holder keeps its
        // transaction (and the lock) open without holding back any xmin.
        let held = PgTryBuilder::new(AssertUnwindSafe(|| {
            unsafe { pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot()) };
            let got = Spi::get_one_with_args::<bool>(
                "SELECT pg_try_advisory_xact_lock($1)",
                &[RETENTION_LOCK.into()],
            )
            .ok()
            .flatten()
            .unwrap_or(false);
            unsafe { pg_sys::PopActiveSnapshot() };
            Ok(got)
        }))
        .catch_others(|e| Err(describe(&e).1))
        .execute();
        let ran = match held {
            Ok(true) => run_cycle_worker(token).map(|()| true),
            // Another sweeper holds the lock: this period is served.
            Ok(false) => Ok(false),
            Err(e) => Err(e),
        };
        // Ending the holder transaction releases the lock.
        unsafe {
            if ran.is_ok() {
                pg_sys::CommitTransactionCommand();
            } else {
                pg_sys::AbortCurrentTransaction();
            }
        }
        let outcome = match ran {
            Ok(true) => Ok(finished(token)),
            Ok(false) => Ok(true),
            Err(e) => Err(e),
        };
        let ok = matches!(outcome, Ok(true));
        in_own_transaction(|| {
            spi::spi(|c| lease::release(c, lease::RETENTION, token, ok.then_some(period)))
        })?;
        match outcome {
            Ok(true) => Ok(()),
            Ok(false) => Err(last_error(token)
                .unwrap_or_else(|| "the cycle worker stopped without a result".into())),
            Err(e) => Err(e),
        }
    }
}

/// Starts the cycle worker for the current claim and waits for it to exit.
fn run_cycle_worker(token: i64) -> Result<(), String> {
    let worker = BackgroundWorkerBuilder::new("queen retention cycle")
        .set_function("queen_retention_cycle_main")
        .set_library("queen")
        .set_argument(token.into_datum())
        .enable_spi_access()
        .set_restart_time(None)
        .set_notify_pid(unsafe { pg_sys::MyProcPid })
        .load_dynamic()
        .map_err(|_| {
            "could not start the retention cycle worker (max_worker_processes?)".to_string()
        })?;
    worker
        .wait_for_shutdown()
        .map_err(|s| format!("retention cycle worker: {s:?}"))
}

fn finished(token: i64) -> bool {
    in_own_transaction(|| {
        spi::spi(|c| {
            exec(
                c,
                query!("retention_worker_finished"),
                &[spi::INT8],
                &[token.into()],
            )
            .next()
            .and_then(|r| spi::opt::<bool>(&r, "finished"))
            .unwrap_or(false)
        })
    })
    .unwrap_or(false)
}

fn last_error(token: i64) -> Option<String> {
    in_own_transaction(|| {
        spi::spi(|c| {
            exec(
                c,
                query!("retention_worker_last_error"),
                &[spi::INT8],
                &[token.into()],
            )
            .next()
            .and_then(|r| spi::opt::<String>(&r, "last_error"))
        })
    })
    .ok()
    .flatten()
}

/// Records the cycle's outcome in the lease row, if the token still holds it.
fn report(token: i64, error: Option<&str>) {
    let _ = in_own_transaction(|| {
        spi::spi(|c| {
            exec(
                c,
                query!("retention_worker_report"),
                &[spi::INT8, spi::TEXT],
                &[token.into(), error.into()],
            );
        })
    });
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn queen_maintenance_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    connect();
    let mut scheduler = Scheduler {
        holder: format!("pid {}", unsafe { pg_sys::MyProcPid }),
        last_error_log: None,
    };
    loop {
        let poll =
            Duration::from_millis((settings::retention_interval_ms() / 10).clamp(50, 1000) as u64);
        if !wait(poll) {
            break;
        }
        if BackgroundWorker::sighup_received() {
            unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
        }
        if !settings::workers_enabled() || spi::in_recovery() || !extension_present() {
            continue;
        }
        scheduler.tick();
    }
    exit_to_be_restarted();
}

/// Takes the next item of a parallel cycle off the shared cursor.
fn pull(c: &mut pgrx::spi::SpiClient<'_>, token: i64) -> Option<Item> {
    let row = exec(
        c,
        query!("retention_worker_pull"),
        &[spi::INT8],
        &[token.into()],
    )
    .next()?;
    Some(Item {
        phase: spi::col(&row, "phase"),
        pid: spi::col(&row, "partition_id"),
        all_cutoff: spi::opt(&row, "all_cutoff"),
        completed_cutoff: spi::opt(&row, "completed_cutoff"),
        cutoff: spi::opt(&row, "cutoff"),
        failing: spi::col(&row, "failing"),
    })
}

/// Pulls and runs items until the shared cursor is empty; each item
/// isolated, its failure counted in `failed`.
fn pull_loop(token: i64, batch: i32, failed: &mut Failed) -> Result<Tally, Failure> {
    let mut runner = OwnTransactions;
    let mut tally = Tally::default();
    while let Some(item) = runner.run(|c| pull(c, token))? {
        tally.add(cycle::process_isolated(&mut runner, &item, batch, failed)?);
    }
    Ok(tally)
}

/// Phases 1 to 3 over `items` with `parallelism` step workers: this one and
/// helpers on their own backends, all pulling from the shared cursor.
fn fan_out(
    token: i64,
    parallelism: i32,
    batch: i32,
    items: &[Item],
    failed: &mut Failed,
) -> Result<Tally, Failure> {
    queue_items(token, items)?;
    let helpers: Vec<_> = (1..parallelism)
        .filter_map(|w| {
            BackgroundWorkerBuilder::new("queen retention step")
                .set_function("queen_retention_step_main")
                .set_library("queen")
                .set_argument(token.into_datum())
                .set_extra(&w.to_string())
                .enable_spi_access()
                .set_restart_time(None)
                .set_notify_pid(unsafe { pg_sys::MyProcPid })
                .load_dynamic()
                .ok()
        })
        .collect();
    let mine = pull_loop(token, batch, failed);
    for h in helpers {
        let _ = h.wait_for_shutdown();
    }
    let (others, error, others_failed, others_failing) = collect_tallies(token)?;
    let mut total = mine?;
    failed.extend(others_failed as usize, others_failing);
    if let Some(e) = error {
        return Err(Failure::new("XX000", e));
    }
    total.add(others);
    Ok(total)
}

/// Writes a parallel cycle's items into the shared work list, in one
/// transaction of its own.
fn queue_items(token: i64, items: &[Item]) -> Result<(), Failure> {
    in_own_transaction_coded(|| {
        spi::spi(|c| {
            let phases: Vec<i16> = items.iter().map(|i| i.phase).collect();
            let pids: Vec<i64> = items.iter().map(|i| i.pid).collect();
            let all: Vec<Option<TimestampWithTimeZone>> =
                items.iter().map(|i| i.all_cutoff).collect();
            let completed: Vec<Option<TimestampWithTimeZone>> =
                items.iter().map(|i| i.completed_cutoff).collect();
            let cutoff: Vec<Option<TimestampWithTimeZone>> =
                items.iter().map(|i| i.cutoff).collect();
            let failing: Vec<bool> = items.iter().map(|i| i.failing).collect();
            exec(
                c,
                query!("retention_worker_queue_items"),
                &[
                    spi::INT8,
                    spi::INT2_ARRAY,
                    spi::INT8_ARRAY,
                    spi::TIMESTAMPTZ_ARRAY,
                    spi::TIMESTAMPTZ_ARRAY,
                    spi::TIMESTAMPTZ_ARRAY,
                    spi::BOOL_ARRAY,
                ],
                &[
                    token.into(),
                    phases.into(),
                    pids.into(),
                    all.into(),
                    completed.into(),
                    cutoff.into(),
                    failing.into(),
                ],
            );
        })
    })
    .map_err(Failure::from)
}

/// What the step workers did, summed from their rows, which it then
/// removes with the work list: the tally, the first errors, and the units
/// that failed.
fn collect_tallies(token: i64) -> Result<(Tally, Option<String>, i64, Vec<String>), Failure> {
    in_own_transaction_coded(|| {
        spi::spi(|c| {
            let row = exec(
                c,
                query!("retention_worker_tally"),
                &[spi::INT8],
                &[token.into()],
            )
            .next()
            .unwrap();
            let tally = Tally {
                segments: spi::col(&row, "segments"),
                messages: spi::col(&row, "messages"),
                txns: spi::col(&row, "txns"),
                evicted: spi::col(&row, "evicted"),
            };
            let error: Option<String> = spi::opt(&row, "errors");
            let others_failed: i64 = spi::col(&row, "failed");
            let others_failing: Vec<String> = spi::col(&row, "failing");
            exec(
                c,
                "DELETE FROM queen.retention_work WHERE token = $1",
                &[spi::INT8],
                &[token.into()],
            );
            exec(
                c,
                "DELETE FROM queen.retention_work_done WHERE token = $1",
                &[spi::INT8],
                &[token.into()],
            );
            (tally, error, others_failed, others_failing)
        })
    })
    .map_err(Failure::from)
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn queen_retention_step_main(arg: pg_sys::Datum) {
    let token = arg.value() as i64;
    let worker: i32 = BackgroundWorker::get_extra().parse().unwrap_or(0);
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGTERM);
    connect();
    let settings = cycle::Settings::from_gucs();
    let mut failed = Failed::default();
    let (tally, error) = match pull_loop(token, settings.batch, &mut failed) {
        Ok(t) => (t, None),
        Err(e) => (Tally::default(), Some(e.to_string())),
    };
    let _ = in_own_transaction(|| {
        spi::spi(|c| {
            exec(
                c,
                query!("retention_worker_done"),
                &[
                    spi::INT8,
                    spi::INT4,
                    spi::INT8,
                    spi::INT8,
                    spi::INT8,
                    spi::INT8,
                    spi::TEXT,
                    spi::INT4,
                    spi::TEXT_ARRAY,
                ],
                &[
                    token.into(),
                    worker.into(),
                    tally.segments.into(),
                    tally.messages.into(),
                    tally.txns.into(),
                    tally.evicted.into(),
                    error.as_deref().into(),
                    (failed.failed as i32).into(),
                    failed.failing.clone().into(),
                ],
            );
        })
    });
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn queen_retention_cycle_main(arg: pg_sys::Datum) {
    let token = arg.value() as i64;
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGTERM);
    connect();
    let settings = cycle::Settings::from_gucs();
    let parallelism = settings::retention_parallelism();
    let mut spread = |items: &[Item], failed: &mut Failed| {
        fan_out(token, parallelism, settings.batch, items, failed)
    };
    let fan: Option<cycle::FanOut<'_>> = if parallelism > 1 {
        Some(&mut spread)
    } else {
        None
    };
    match cycle::run_cycle(&mut OwnTransactions, &settings, fan) {
        Ok(r) => {
            r.log();
            report(token, None);
        }
        Err(e) => report(token, Some(&e.to_string())),
    }
}
