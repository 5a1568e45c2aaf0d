//! The sweeper background workers (`queen.sweeper_workers` of them). Each
//! loops PROBE, DRAIN (claim and fire in the same iteration, claiming stops
//! at half the lease), SLEEP. They share the work through SKIP LOCKED only;
//! a worker that dies loses nothing: its claims expire and another fires
//! them.

use std::time::{Duration, Instant};

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, SignalWakeFlags};
use pgrx::prelude::*;
use pgrx::{pg_sys, IntoDatum};

use super::{sleep, timers};
use crate::guc;
use crate::retention::worker::{database_name, extension_present, in_own_transaction};
use crate::sql;

#[derive(Debug, Clone)]
pub struct Settings {
    pub claim_batch: i32,
    pub cycle_max_rows: i32,
    pub lease_ms: i32,
    pub max_fire_bytes: i64,
    pub max_sleep_ms: i64,
}

impl Settings {
    pub fn from_gucs() -> Settings {
        Settings {
            claim_batch: guc::SWEEPER_CLAIM_BATCH.get(),
            cycle_max_rows: guc::SWEEPER_CYCLE_MAX_ROWS.get(),
            lease_ms: guc::SWEEPER_LEASE_MS.get(),
            max_fire_bytes: guc::SWEEPER_MAX_FIRE_BYTES.get() as i64,
            max_sleep_ms: guc::SWEEPER_MAX_SLEEP_MS.get() as i64,
        }
    }
}

pub fn register() {
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    for n in 0..guc::SWEEPER_WORKERS.get() {
        BackgroundWorkerBuilder::new(&format!("queen sweeper {n}"))
            .set_function("queen_sweeper_main")
            .set_library("queen")
            .set_argument((n as i32).into_datum())
            .enable_spi_access()
            .set_restart_time(Some(Duration::from_secs(10)))
            .load();
    }
}

/// A jitter in 0..1 for the empty-claim band, from the worker's own state.
fn jitter(state: &mut u64) -> f64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % 10_000) as f64 / 10_000.0
}

/// One PROBE + DRAIN; answers the sleep before the next.
fn cycle(s: &Settings, start_shard: i32, rng: &mut u64) -> Result<i64, String> {
    let probe = in_own_transaction(|| sql::spi(timers::probe))?;
    let next = probe["nextInMs"].as_i64();
    let due = probe["due"].as_i64().unwrap_or(0);
    let mut empty_claim = false;
    if due > 0 && guc::TIMERS_FIRE_ENABLED.get() {
        let started = Instant::now();
        let budget = Duration::from_millis(s.lease_ms as u64 / 2);
        let mut fired = 0i64;
        // Claim and fire in the same iteration, so no claim outlives its
        // lease while earlier ones are still being fired.
        while started.elapsed() < budget && fired < s.cycle_max_rows as i64 {
            let claim = in_own_transaction(|| sql::spi(|c| timers::claim(c, start_shard, s.claim_batch, s.lease_ms)))?;
            if claim["claimed"] == 0 {
                empty_claim = fired == 0;
                break;
            }
            let token = uuid::Uuid::parse_str(claim["token"].as_str().unwrap()).unwrap();
            loop {
                let r = in_own_transaction(|| sql::spi(|c| timers::fire(c, token, s.max_fire_bytes)))?;
                fired += r["fired"].as_i64().unwrap_or(0);
                if r["done"] == true {
                    break;
                }
            }
            if BackgroundWorker::sigterm_received() {
                break;
            }
        }
    }
    Ok(sleep::sleep_ms(next, due, empty_claim, jitter(rng), s.max_sleep_ms))
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn queen_sweeper_main(arg: pg_sys::Datum) {
    let n = arg.value() as i32;
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    super::wake::register_sweeper(n as usize);
    BackgroundWorker::connect_worker_to_spi(Some(&database_name()), None);
    let workers = guc::SWEEPER_WORKERS.get().max(1);
    // Only the starting shard derives from the worker's identity, and it
    // rotates every cycle.
    let mut start_shard = n * timers::SHARDS / workers;
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (unsafe { pg_sys::MyProcPid } as u64);
    let mut last_error: Option<Instant> = None;
    loop {
        let s = Settings::from_gucs();
        let wait = if !guc::WORKERS_ENABLED.get() || sql::in_recovery() || !extension_present() {
            s.max_sleep_ms
        } else {
            match cycle(&s, start_shard, &mut rng) {
                Ok(ms) => ms,
                Err(e) => {
                    if last_error.is_none_or(|t| t.elapsed() >= Duration::from_secs(30)) {
                        pgrx::log!("sweeper cycle failed: {e}");
                        last_error = Some(Instant::now());
                    }
                    s.max_sleep_ms
                }
            }
        };
        start_shard = (start_shard + 1) % timers::SHARDS;
        if !BackgroundWorker::wait_latch(Some(Duration::from_millis(wait.max(1) as u64))) {
            break;
        }
        if BackgroundWorker::sighup_received() {
            unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
        }
    }
}
