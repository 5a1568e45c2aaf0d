//! The sweeper background workers (`queen.sweeper_workers` of them). Each
//! loops PROBE, DRAIN (claim and fire in the same iteration, claiming stops
//! at half the lease), SUB-CLOCKS (the KV usage rollup, then the KV prune,
//! each on its own gate), SLEEP. They share the work through SKIP LOCKED
//! only; a worker that dies loses nothing: its claims expire and another
//! fires them. Priority is fire, rollup, prune, and the worker sheds from
//! the bottom: a cycle that left timers due skips both slow phases, and a
//! slow phase that meets a configuration error (SQLSTATE class 42) turns
//! itself off until the next configuration reload while the fire goes on.

use std::time::{Duration, Instant};

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, SignalWakeFlags};
use pgrx::prelude::*;
use pgrx::{pg_sys, IntoDatum};

use super::drain::{self, Settings};
use super::{metrics, sleep};
use crate::catalog::switches::{self, Surface};
use crate::kv::prune;
use crate::maintenance::bgworker::{
    extension_present, in_own_transaction, in_own_transaction_coded, stopping, wait,
};
use crate::maintenance::unit::OwnTransactions;
use crate::pg::settings;
use crate::pg::spi;
use crate::timers::wake;

pub fn register() {
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    for n in 0..settings::sweeper_workers() {
        BackgroundWorkerBuilder::new(&format!("queen sweeper {n}"))
            .set_function("queen_sweeper_main")
            .set_library("queen")
            .set_argument(n.into_datum())
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

/// The two slow phases' gates and whether each is still on.
struct SubClocks {
    next_rollup: Instant,
    next_prune: Instant,
    rollup_off: bool,
    prune_off: bool,
    /// A rollup under way, resumed cycle after cycle.
    rollup: Option<prune::Rollup>,
    /// When each phase's failure was last logged: rollup, prune.
    logged: [Option<Instant>; 2],
}

/// The share of one cycle a rollup in progress may take. Not measured: a
/// few pages of `queen.kv_usage_batch` rows, short beside the sleep bands.
const ROLLUP_SLICE: Duration = Duration::from_millis(50);

/// A failing slow phase is logged at most this often (it is retried on its
/// own clock; a class-42 error turns it off and is logged once).
const PHASE_ERROR_LOG_EVERY: Duration = Duration::from_secs(30);

/// Logs a slow phase's failure (rate-limited through `last_logged`);
/// answers whether it turns the phase off: a class-42 error (a missing
/// table, a revoked grant) is configuration, which a retry will not fix.
fn failed(
    worker: usize,
    phase: &str,
    (sqlstate, msg): &(String, String),
    last_logged: &mut Option<Instant>,
) -> bool {
    let off = sqlstate.starts_with("42");
    if off || last_logged.is_none_or(|t| t.elapsed() >= PHASE_ERROR_LOG_EVERY) {
        pgrx::log!(
            "sweeper {worker}: {phase} failed (SQLSTATE {sqlstate}): {msg}{}",
            if off { "; off until a reload" } else { "" }
        );
        *last_logged = Some(Instant::now());
    }
    off
}

impl SubClocks {
    fn new() -> SubClocks {
        let now = Instant::now();
        SubClocks {
            next_rollup: now,
            next_prune: now,
            rollup_off: false,
            prune_off: false,
            rollup: None,
            logged: [None; 2],
        }
    }

    /// Runs whichever slow phase is due, rollup first, at `start_shard`.
    fn run(&mut self, worker: usize, start_shard: i32) {
        if !self.rollup_off && (self.rollup.is_some() || Instant::now() >= self.next_rollup) {
            // A rollup reads the whole table in pages; it takes at most
            // ROLLUP_SLICE of each cycle and resumes in the next, so a large
            // table never holds up the fire.
            let batch = settings::kv_usage_batch();
            let rollup = self.rollup.get_or_insert_with(prune::Rollup::new);
            let slice = Instant::now();
            let mut outcome = Ok(());
            while !rollup.done && outcome.is_ok() && !stopping() && slice.elapsed() < ROLLUP_SLICE {
                outcome = in_own_transaction_coded(|| spi::spi(|c| rollup.page(c, batch)));
            }
            if outcome.is_ok() && rollup.done {
                outcome = in_own_transaction_coded(|| spi::spi(|c| rollup.write(c))).map(|_| ());
            }
            match outcome {
                Ok(()) if rollup.done => {
                    metrics::rolled_up();
                    self.rollup = None;
                    self.next_rollup = Instant::now() + settings::kv_usage_every();
                }
                Ok(()) => {}
                Err(e) => {
                    self.rollup = None;
                    self.next_rollup = Instant::now() + settings::kv_usage_every();
                    self.rollup_off = failed(worker, "KV usage rollup", &e, &mut self.logged[0]);
                }
            }
        }
        if !self.prune_off && Instant::now() >= self.next_prune {
            let every = settings::kv_expire_every();
            self.next_prune = Instant::now() + every;
            let batch = settings::kv_expire_batch();
            let count_max = settings::kv_expired_count_max();
            // Another pass only while passes come back full, and only for half
            // the period: each pass is its own transaction of at most `batch`.
            // Then one count of what is left, deleting or not.
            let started = Instant::now();
            let mut deleted = 0i64;
            let mut outcome = Ok(());
            loop {
                match in_own_transaction_coded(|| {
                    spi::spi(|c| prune::expire(c, start_shard, batch))
                }) {
                    Ok(n) => {
                        deleted += n;
                        if n < batch as i64 || started.elapsed() >= every / 2 || stopping() {
                            break;
                        }
                    }
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            }
            let counted = outcome.and_then(|()| {
                in_own_transaction_coded(|| spi::spi(|c| prune::expired_present(c, count_max)))
            });
            match counted {
                Ok((present, _)) => metrics::pruned(deleted, present),
                Err(e) => {
                    self.prune_off = failed(worker, "KV prune", &e, &mut self.logged[1]);
                }
            }
        }
        metrics::degraded(worker, self.prune_off, self.rollup_off);
    }

    /// New periods apply from now: no gate stays further away than its
    /// period.
    fn reloaded(&mut self) {
        let now = Instant::now();
        self.next_rollup = self.next_rollup.min(now + settings::kv_usage_every());
        self.next_prune = self.next_prune.min(now + settings::kv_expire_every());
    }

    /// Milliseconds until the next slow phase that is on is due.
    fn next_in_ms(&self) -> Option<i64> {
        let now = Instant::now();
        if self.rollup.is_some() && !self.rollup_off {
            return Some(0);
        }
        [
            (!self.rollup_off).then_some(self.next_rollup),
            (!self.prune_off).then_some(self.next_prune),
        ]
        .into_iter()
        .flatten()
        .map(|at| at.saturating_duration_since(now).as_millis() as i64)
        .min()
    }
}

/// How the fire adapts under pressure: it never turns itself off, it takes
/// smaller claims and sleeps longer between them. Pressure is a claim whose
/// fires lost rows to another sweeper (their claim tokens changed), or a
/// claim-and-fire round slower than an eighth of the lease: past that, a
/// batch risks outliving its lease while it waits on partitions.
pub struct Pressure {
    pub batch: i32,
    pub floor_ms: i64,
}

/// The smallest claim under pressure, and the longest sleep it adds. Not
/// measured: a claim this small still amortises its probe, and the floor
/// is the top of the empty-claim band.
const PRESSURE_MIN_BATCH: i32 = 10;
const PRESSURE_MAX_FLOOR_MS: i64 = 200;

impl Pressure {
    pub fn new(claim_batch: i32) -> Pressure {
        Pressure {
            batch: claim_batch,
            floor_ms: 0,
        }
    }

    /// After one claim-and-fire round of `claimed` rows, `fired` of them
    /// fired, taking `took`.
    pub fn observe(&mut self, s: &Settings, claimed: i64, fired: i64, took: Duration) {
        let slow = took > Duration::from_millis(s.lease_ms as u64 / 8);
        if fired < claimed || slow {
            self.batch = (self.batch / 2).max(PRESSURE_MIN_BATCH.min(s.claim_batch));
            self.floor_ms = (self.floor_ms * 2).clamp(25, PRESSURE_MAX_FLOOR_MS);
        } else {
            self.batch = (self.batch + self.batch / 2 + 1).min(s.claim_batch);
            self.floor_ms = if self.floor_ms <= 25 {
                0
            } else {
                self.floor_ms / 2
            };
        }
        self.batch = self.batch.min(s.claim_batch);
    }
}

/// One PROBE + DRAIN; answers the sleep before the next and whether timers
/// were left due.
fn cycle(
    s: &Settings,
    start_shard: i32,
    rng: &mut u64,
    pressure: &mut Pressure,
) -> Result<(i64, bool), String> {
    let (probe, fire_paused) = in_own_transaction(|| {
        spi::spi(|c| {
            (
                drain::probe(c, true),
                switches::is_paused(c, Surface::TimersFire),
            )
        })
    })?;
    let next = probe["nextInMs"].as_i64();
    let due = probe["due"].as_i64().unwrap_or(0);
    let mut empty_claim = false;
    let mut left_due = false;
    let fire_on = settings::timers_fire_enabled() && !fire_paused;
    if !fire_on {
        // Due timers wait; the resume wakes the sweepers (api::system), a
        // reload of the setting is seen within the longest sleep.
        let band = sleep::sleep_ms(None, 0, false, jitter(rng), s.max_sleep_ms);
        return Ok((band, false));
    }
    if due > 0 {
        let started = Instant::now();
        let budget = Duration::from_millis(s.lease_ms as u64 / 2);
        let mut fired = 0i64;
        // Claim and fire in the same iteration, so no claim outlives its
        // lease while earlier ones are still being fired.
        while started.elapsed() < budget && fired < s.cycle_max_rows as i64 {
            let round = Instant::now();
            if fired > 0 {
                in_own_transaction(|| spi::spi(drain::raise_floors))?;
            }
            let batch = pressure.batch.min(s.claim_batch);
            let claim = in_own_transaction(|| {
                spi::spi(|c| drain::claim(c, start_shard, batch, s.lease_ms, true))
            })?;
            let claimed = claim.keys.len() as i64;
            if claimed == 0 {
                empty_claim = fired == 0;
                break;
            }
            let fired_here = drain::fire_claimed(&mut OwnTransactions, &claim, s)
                .map_err(|e| e.to_string())?
                .fired;
            fired += fired_here;
            pressure.observe(s, claimed, fired_here, round.elapsed());
            metrics::fire_batch(pressure.batch);
            if stopping() {
                break;
            }
        }
        left_due =
            !empty_claim && (started.elapsed() >= budget || fired >= s.cycle_max_rows as i64);
    }
    let band = sleep::sleep_ms(next, due, empty_claim, jitter(rng), s.max_sleep_ms);
    Ok((band.max(pressure.floor_ms.min(s.max_sleep_ms)), left_due))
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn queen_sweeper_main(arg: pg_sys::Datum) {
    let n = arg.value() as i32;
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    wake::register_sweeper(n as usize);
    crate::maintenance::bgworker::connect();
    let workers = settings::sweeper_workers().max(1);
    // Only the starting shard derives from the worker's identity, and it
    // rotates every cycle.
    let mut start_shard = n * crate::catalog::SHARDS / workers;
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (unsafe { pg_sys::MyProcPid } as u64);
    let mut last_error: Option<Instant> = None;
    let mut clocks = SubClocks::new();
    let mut pressure = Pressure::new(settings::sweeper_claim_batch());
    loop {
        let s = Settings::from_gucs();
        let wait_ms = if !settings::workers_enabled() || spi::in_recovery() || !extension_present()
        {
            s.max_sleep_ms
        } else {
            match cycle(&s, start_shard, &mut rng, &mut pressure) {
                Ok((ms, left_due)) => {
                    if !left_due {
                        clocks.run(n as usize, start_shard);
                    }
                    // The band's sleep, cut short when a slow phase falls due.
                    clocks.next_in_ms().map_or(ms, |gate| ms.min(gate.max(1)))
                }
                Err(e) => {
                    if last_error.is_none_or(|t| t.elapsed() >= Duration::from_secs(30)) {
                        pgrx::log!("sweeper cycle failed: {e}");
                        last_error = Some(Instant::now());
                    }
                    s.max_sleep_ms
                }
            }
        };
        start_shard = (start_shard + 1) % crate::catalog::SHARDS;
        // A worker is never idle in the backend sense: report its statistics
        // (transactions, tuples) here, or pg_stat_* would not see its work.
        unsafe { pg_sys::pgstat_report_stat(false) };
        if !wait(Duration::from_millis(wait_ms.max(1) as u64)) {
            break;
        }
        if BackgroundWorker::sighup_received() {
            unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
            // A reload is how an operator says the configuration was fixed.
            clocks.rollup_off = false;
            clocks.prune_off = false;
            clocks.reloaded();
            metrics::degraded(n as usize, false, false);
        }
    }
    crate::maintenance::bgworker::exit_to_be_restarted();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            claim_batch: 200,
            cycle_max_rows: 5000,
            lease_ms: 30_000,
            max_fire_bytes: 8 << 20,
            max_sleep_ms: 1000,
            max_fire_attempts: 5,
        }
    }

    #[test]
    fn pressure_shrinks_the_batch_and_lengthens_the_sleep_then_recovers() {
        let s = settings();
        let mut p = Pressure::new(s.claim_batch);
        let quick = Duration::from_millis(10);
        let slow = Duration::from_millis(s.lease_ms as u64 / 8 + 1);
        p.observe(&s, 200, 200, quick);
        assert_eq!(
            (p.batch, p.floor_ms),
            (200, 0),
            "no pressure: full batch, no floor"
        );
        p.observe(&s, 200, 150, quick);
        assert_eq!(
            (p.batch, p.floor_ms),
            (100, 25),
            "rows lost to another sweeper"
        );
        p.observe(&s, 100, 100, slow);
        assert_eq!(
            (p.batch, p.floor_ms),
            (50, 50),
            "a round slower than an eighth of the lease"
        );
        for _ in 0..10 {
            p.observe(&s, 50, 50, slow);
        }
        assert_eq!(
            (p.batch, p.floor_ms),
            (PRESSURE_MIN_BATCH, PRESSURE_MAX_FLOOR_MS),
            "bounded at both ends"
        );
        for _ in 0..20 {
            p.observe(&s, 10, 10, quick);
        }
        assert_eq!((p.batch, p.floor_ms), (200, 0), "recovered");
    }
}
