//! Where the sweepers' due scan starts in each of the 64 shards: a floor
//! below which every timer is known done. A fire marks a timer done and
//! the retention cycle deletes it later (when what it deletes can be
//! reclaimed, `maintenance::retention::compact`), so without the floors
//! every claim would pass again every done timer not yet deleted: all of
//! those a held snapshot keeps.
//!
//! A floor rises to the first timer not done that a probe's scan saw, and
//! never past the cap read before that scan (`sweeper_timers_cap.sql`): a
//! schedule takes a transaction id and then reads its due instant, no
//! earlier than the clock, so a timer the scan could not see yet (its
//! transaction still open) is due no earlier than the start of a
//! transaction that held an id when the cap was read, or than the cap's
//! clock. A timer in the floor's way (not done, claimed,
//! or failing) holds it where it is. Only a probe whose transaction has
//! written nothing raises them: one that sees its own marks could raise a
//! floor past a fire it then rolls back. Kept in shared memory: gone at a
//! restart, when every scan starts from the first timer again; a database
//! not preloaded has none.

use std::sync::atomic::{AtomicI64, Ordering};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::PgAtomic;

use crate::catalog::SHARDS;

/// A floor not yet known: the scan starts from the first timer.
const NONE: i64 = i64::MIN;

/// Below a first timer seen not done, what a floor is set to: a margin
/// for the microsecond the statement's arithmetic may round off.
const MARGIN_US: i64 = 1000;

pub struct Floors {
    at: [AtomicI64; SHARDS as usize],
}

impl Default for Floors {
    fn default() -> Floors {
        Floors {
            at: std::array::from_fn(|_| AtomicI64::new(NONE)),
        }
    }
}

unsafe impl PGRXSharedMemory for Floors {}

static FLOORS: PgAtomic<Floors> = unsafe { PgAtomic::new(c"queen_timer_floors") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(FLOORS);
}

fn shared() -> Option<&'static Floors> {
    crate::pg::shmem::preloaded().then(|| FLOORS.get())
}

/// The floors, as the due scans take them (microseconds since the epoch
/// per shard, NULL from the first timer): all NULL when `use_floors` is
/// false or there are none in this server.
pub fn current(use_floors: bool) -> Vec<Option<i64>> {
    let shared = shared().filter(|_| use_floors);
    (0..SHARDS as usize)
        .map(|s| {
            shared
                .map(|f| f.at[s].load(Ordering::SeqCst))
                .filter(|v| *v != NONE)
        })
        .collect()
}

/// Whether this transaction has written nothing yet (no transaction id):
/// the condition for a scan of it to raise the floors.
pub fn may_raise() -> bool {
    shared().is_some()
        && unsafe { pg_sys::GetTopTransactionIdIfAny() } == pg_sys::InvalidTransactionId
}

/// Raises each shard's floor to its first timer not done seen by a scan
/// (`first[s]`, None: none from the floor), at most to `cap_us`.
pub fn raise(first: &[Option<i64>], cap_us: i64) {
    let Some(f) = shared() else {
        return;
    };
    for (s, first) in first.iter().enumerate().take(SHARDS as usize) {
        let to = first.map_or(cap_us, |at| at.min(cap_us)) - MARGIN_US;
        f.at[s].fetch_max(to, Ordering::SeqCst);
    }
}

/// How far behind the clock the lowest floor is (ms): how much of the past
/// the workers' due scans start from. None while a shard has no floor yet.
pub fn behind_ms() -> Option<i64> {
    let lowest = current(true).into_iter().min()??;
    Some(((crate::pg::time::wall_clock_us() - lowest) / 1000).max(0))
}
