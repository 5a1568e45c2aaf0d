//! Which cursors have states the retention cycle has not yet deleted: a
//! set in shared memory that every writer of a cursor's state adds the
//! cursor to (a pop, an ack, a renewal, a seek), and the cycle's
//! compaction takes from (`maintenance::retention::compact`).
//!
//! The set may lose a cursor, never hold a wrong one that matters: it is
//! [`SLOTS`] entries found by the hash of (database, cursor), and a cursor
//! noted where another was overwrites it. Deleting the replaced states of
//! a cursor that has none is a probe that deletes nothing, so a torn or
//! stale entry costs a probe; a lost one is found again by the cursor's
//! next write, or by the cycle's sweep over every cursor in id order
//! (`compact::SWEEP_CURSORS` a cycle). Without `shared_preload_libraries`
//! there is no set: the sweep alone finds them.

use std::sync::atomic::{AtomicI64, Ordering};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::PgAtomic;

/// Cursors the set holds at most, over every database: two parts of
/// [`PART_SLOTS`] (a part is built on the postmaster's stack when shared
/// memory is made, so none may be large).
pub const SLOTS: usize = PARTS * PART_SLOTS;
const PARTS: usize = 2;
const PART_SLOTS: usize = 16384;

/// No cursor (ids are drawn from 1).
const EMPTY: i64 = 0;

#[repr(C)]
pub struct Slot {
    database: AtomicI64,
    cursor: AtomicI64,
}

#[repr(C)]
pub struct Part {
    slots: [Slot; PART_SLOTS],
}

impl Default for Part {
    fn default() -> Part {
        // Every field is an atomic, for which zero is a valid value.
        unsafe { std::mem::zeroed() }
    }
}

unsafe impl PGRXSharedMemory for Part {}

static PART0: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_replaced_states_0") };
static PART1: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_replaced_states_1") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(PART0);
    pgrx::pg_shmem_init!(PART1);
}

fn parts() -> Option<[&'static Part; PARTS]> {
    crate::pg::shmem::preloaded().then(|| [PART0.get(), PART1.get()])
}

fn this_database() -> i64 {
    unsafe { pg_sys::MyDatabaseId }.to_u32() as i64
}

fn slot_of(parts: [&'static Part; PARTS], database: i64, cursor: i64) -> &'static Slot {
    let h = xxhash_rust::xxh3::xxh3_64_with_seed(&cursor.to_le_bytes(), database as u64);
    let i = (h % SLOTS as u64) as usize;
    &parts[i / PART_SLOTS].slots[i % PART_SLOTS]
}

/// Notes that `cursor` now has a replaced state (its writer put the next
/// one in).
pub fn note(cursor: i64) {
    let Some(parts) = parts() else { return };
    let database = this_database();
    let slot = slot_of(parts, database, cursor);
    if slot.cursor.load(Ordering::Relaxed) == cursor
        && slot.database.load(Ordering::Relaxed) == database
    {
        return;
    }
    slot.database.store(database, Ordering::Relaxed);
    slot.cursor.store(cursor, Ordering::Release);
}

/// Takes at most `limit` cursors of this database out of the set.
pub fn take(limit: usize) -> Vec<i64> {
    let Some(parts) = parts() else {
        return Vec::new();
    };
    let database = this_database();
    let mut out = Vec::new();
    for part in parts {
        for slot in &part.slots {
            if out.len() >= limit {
                return out;
            }
            let cursor = slot.cursor.load(Ordering::Acquire);
            if cursor == EMPTY || slot.database.load(Ordering::Relaxed) != database {
                continue;
            }
            if slot
                .cursor
                .compare_exchange(cursor, EMPTY, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                out.push(cursor);
            }
        }
    }
    out
}
