//! What the sweepers did, in shared memory, readable from SQL with
//! `queen.sweeper_metrics()`: timers fired and how late, what the last probe
//! saw due, the expired-but-present KV rows the last prune pass counted, and
//! whether a slow phase degraded to off. Counters only rise; gauges hold the
//! latest value any sweeper wrote. Gone at a restart, like any counter a
//! scraper differences. Beside them, what the last retention cycle's work
//! list held (`queen.maintenance_status()` answers it with the retention
//! task).

use std::sync::atomic::{AtomicI64, Ordering};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::PgAtomic;
use serde_json::{json, Value};

#[derive(Default)]
pub struct Metrics {
    fired_total: AtomicI64,
    fire_lateness_sum_ms: AtomicI64,
    fire_lateness_max_ms: AtomicI64,
    fire_lateness_last_ms: AtomicI64,
    due: AtomicI64,
    probe_lateness_ms: AtomicI64,
    probes_total: AtomicI64,
    expired_present: AtomicI64,
    prune_deleted_total: AtomicI64,
    prune_passes_total: AtomicI64,
    rollups_total: AtomicI64,
    /// Bit n: sweeper n turned the phase off after a class-42 error.
    prune_off: AtomicI64,
    rollup_off: AtomicI64,
    last_probe_us: AtomicI64,
    last_prune_us: AtomicI64,
    last_rollup_us: AtomicI64,
    fire_batch: AtomicI64,
    fire_failed_total: AtomicI64,
    set_aside_total: AtomicI64,
    /// The last retention cycle's partitions due and backed off, plus one
    /// (0: no cycle since the server started).
    retention_due: AtomicI64,
    retention_backed_off: AtomicI64,
}

unsafe impl PGRXSharedMemory for Metrics {}

static METRICS: PgAtomic<Metrics> = unsafe { PgAtomic::new(c"queen_sweeper_metrics") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(METRICS);
}

fn shared() -> Option<&'static Metrics> {
    crate::pg::shmem::preloaded().then(|| METRICS.get())
}

pub fn probed(due: i64, lateness_ms: i64) {
    if let Some(m) = shared() {
        m.due.store(due, Ordering::Relaxed);
        m.probe_lateness_ms.store(lateness_ms, Ordering::Relaxed);
        m.probes_total.fetch_add(1, Ordering::Relaxed);
        m.last_probe_us
            .store(crate::pg::time::wall_clock_us(), Ordering::Relaxed);
    }
}

/// `fired` timers whose latest was `max_lateness_ms` late, `sum_ms` in all.
pub fn fired(fired: i64, max_lateness_ms: i64, sum_ms: i64) {
    if let (Some(m), true) = (shared(), fired > 0) {
        m.fired_total.fetch_add(fired, Ordering::Relaxed);
        m.fire_lateness_sum_ms.fetch_add(sum_ms, Ordering::Relaxed);
        m.fire_lateness_max_ms
            .fetch_max(max_lateness_ms, Ordering::Relaxed);
        m.fire_lateness_last_ms
            .store(max_lateness_ms, Ordering::Relaxed);
    }
}

pub fn pruned(deleted: i64, expired_present: i64) {
    if let Some(m) = shared() {
        m.prune_deleted_total.fetch_add(deleted, Ordering::Relaxed);
        m.prune_passes_total.fetch_add(1, Ordering::Relaxed);
        m.expired_present.store(expired_present, Ordering::Relaxed);
        m.last_prune_us
            .store(crate::pg::time::wall_clock_us(), Ordering::Relaxed);
    }
}

/// Fires of single timers that failed, and timers set aside for good.
pub fn fire_failed(failed: i64, set_aside: i64) {
    if let (Some(m), true) = (shared(), failed > 0) {
        m.fire_failed_total.fetch_add(failed, Ordering::Relaxed);
        m.set_aside_total.fetch_add(set_aside, Ordering::Relaxed);
    }
}

/// The claim size the fire is using (smaller under pressure).
pub fn fire_batch(batch: i32) {
    if let Some(m) = shared() {
        m.fire_batch.store(batch as i64, Ordering::Relaxed);
    }
}

pub fn rolled_up() {
    if let Some(m) = shared() {
        m.rollups_total.fetch_add(1, Ordering::Relaxed);
        m.last_rollup_us
            .store(crate::pg::time::wall_clock_us(), Ordering::Relaxed);
    }
}

/// Records whether sweeper `n` has the prune / rollup off.
pub fn degraded(n: usize, prune_off: bool, rollup_off: bool) {
    if let Some(m) = shared() {
        let bit = 1i64 << n;
        for (flag, off) in [(&m.prune_off, prune_off), (&m.rollup_off, rollup_off)] {
            if off {
                flag.fetch_or(bit, Ordering::Relaxed);
            } else {
                flag.fetch_and(!bit, Ordering::Relaxed);
            }
        }
    }
}

/// Notes what the retention cycle that just ended found: `due` partitions
/// on its work list, `backed_off` of them put off.
pub fn retention_cycle(due: usize, backed_off: usize) {
    if let Some(m) = shared() {
        m.retention_due.store(due as i64 + 1, Ordering::Relaxed);
        m.retention_backed_off
            .store(backed_off as i64 + 1, Ordering::Relaxed);
    }
}

/// The last retention cycle's (partitions due, partitions backed off); None
/// before the first since the server started, or without shared memory.
pub fn retention_work_list() -> Option<(i64, i64)> {
    let m = shared()?;
    let due = m.retention_due.load(Ordering::Relaxed);
    let off = m.retention_backed_off.load(Ordering::Relaxed);
    (due > 0 && off > 0).then(|| (due - 1, off - 1))
}

fn iso(us: i64) -> Value {
    if us == 0 {
        Value::Null
    } else {
        json!(crate::pg::time::micros_to_iso(us))
    }
}

pub fn snapshot() -> Value {
    let Some(m) = shared() else {
        return json!({"available": false, "reason": "queen is not in shared_preload_libraries"});
    };
    let g = |a: &AtomicI64| a.load(Ordering::Relaxed);
    let fired = g(&m.fired_total);
    json!({
        "available": true,
        "firedTotal": fired,
        "fireLatenessLastMs": g(&m.fire_lateness_last_ms),
        "fireLatenessMaxMs": g(&m.fire_lateness_max_ms),
        "fireLatenessAvgMs": if fired > 0 { g(&m.fire_lateness_sum_ms) as f64 / fired as f64 } else { 0.0 },
        "fireBatch": g(&m.fire_batch),
        "fireFailedTotal": g(&m.fire_failed_total),
        "timersSetAsideTotal": g(&m.set_aside_total),
        "due": g(&m.due),
        "probeLatenessMs": g(&m.probe_lateness_ms),
        "probesTotal": g(&m.probes_total),
        "kvExpiredPresent": g(&m.expired_present),
        "kvPrunedTotal": g(&m.prune_deleted_total),
        "kvPrunePassesTotal": g(&m.prune_passes_total),
        "kvRollupsTotal": g(&m.rollups_total),
        "kvPruneOff": g(&m.prune_off) != 0,
        "kvRollupOff": g(&m.rollup_off) != 0,
        "lastProbeAt": iso(g(&m.last_probe_us)),
        "lastPruneAt": iso(g(&m.last_prune_us)),
        "lastRollupAt": iso(g(&m.last_rollup_us)),
        "dueScanBehindMs": crate::timers::floors::behind_ms(),
    })
}
