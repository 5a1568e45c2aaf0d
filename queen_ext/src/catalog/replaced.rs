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
//!
//! Beside the set, per database, what the compaction keeps between cycles
//! (each cycle runs in a process of its own): the transaction id that
//! followed its last pass, and where its sweep goes on. Without shared
//! memory, or past [`DATABASES`] databases, the process keeps them.

use std::cell::Cell;
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

/// Databases whose compaction memory is kept in shared memory.
pub const DATABASES: usize = 64;

/// The compactions of the retention cycle, each with its own memory: the
/// log's cursor states, the rows ephemeral queues leave behind, and fired
/// timers.
#[derive(Debug, Clone, Copy)]
pub enum Pass {
    States = 0,
    Ephemeral = 1,
    Timers = 2,
}

/// How many [`Pass`] kinds there are.
const PASSES: usize = 3;

/// One database's compaction memory; `database` 0 is a free entry.
#[repr(C)]
pub struct Memory {
    database: AtomicI64,
    /// Per [`Pass`], the transaction id that followed its last pass that
    /// deleted something, plus one (0: none yet).
    last_pass: [AtomicI64; PASSES],
    /// Per [`Pass`], where its sweep goes on after: a cursor id, an
    /// ephemeral queue's incarnation.
    swept_to: [AtomicI64; PASSES],
}

#[repr(C)]
pub struct Memories {
    entries: [Memory; DATABASES],
}

impl Default for Memories {
    fn default() -> Memories {
        // Every field is an atomic, for which zero is a valid value.
        unsafe { std::mem::zeroed() }
    }
}

unsafe impl PGRXSharedMemory for Memories {}

static PART0: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_replaced_states_0") };
static PART1: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_replaced_states_1") };
static MEMORIES: PgAtomic<Memories> = unsafe { PgAtomic::new(c"queen_compaction_memory") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(PART0);
    pgrx::pg_shmem_init!(PART1);
    pgrx::pg_shmem_init!(MEMORIES);
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

thread_local! {
    /// The memory of a database the shared entries have no room for (or
    /// of every database, without shared memory): (database, last passes,
    /// swept to).
    static LOCAL: Cell<(i64, [i64; PASSES], [i64; PASSES])> = const { Cell::new((0, [0; PASSES], [0; PASSES])) };
}

/// This database's shared entry, claimed if it has none.
fn memory() -> Option<&'static Memory> {
    if !crate::pg::shmem::preloaded() {
        return None;
    }
    let database = this_database();
    let entries = &MEMORIES.get().entries;
    if let Some(m) = entries
        .iter()
        .find(|m| m.database.load(Ordering::Acquire) == database)
    {
        return Some(m);
    }
    for m in entries {
        match m
            .database
            .compare_exchange(0, database, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return Some(m),
            Err(d) if d == database => return Some(m),
            Err(_) => {}
        }
    }
    None
}

/// This process's memory of this database: (last passes, swept to).
fn local() -> ([i64; PASSES], [i64; PASSES]) {
    let (database, last, swept) = LOCAL.with(Cell::get);
    if database == this_database() {
        (last, swept)
    } else {
        ([0; PASSES], [0; PASSES])
    }
}

fn set_local(last: [i64; PASSES], swept: [i64; PASSES]) {
    LOCAL.with(|l| l.set((this_database(), last, swept)));
}

/// The transaction id that followed this database's last pass of `pass`
/// that deleted something; None before the first.
pub fn last_pass(pass: Pass) -> Option<u32> {
    let v = match memory() {
        Some(m) => m.last_pass[pass as usize].load(Ordering::Acquire),
        None => local().0[pass as usize],
    };
    (v > 0).then(|| (v - 1) as u32)
}

/// Notes `next`, the transaction id that followed a pass of `pass` that
/// deleted something.
pub fn set_last_pass(pass: Pass, next: u32) {
    let v = next as i64 + 1;
    match memory() {
        Some(m) => m.last_pass[pass as usize].store(v, Ordering::Release),
        None => {
            let (mut last, swept) = local();
            last[pass as usize] = v;
            set_local(last, swept);
        }
    }
}

/// Where this database's sweep of `pass` goes on after (0: from the start).
pub fn swept_to(pass: Pass) -> i64 {
    match memory() {
        Some(m) => m.swept_to[pass as usize].load(Ordering::Acquire),
        None => local().1[pass as usize],
    }
}

/// Notes where this database's sweep of `pass` goes on after.
pub fn set_swept_to(pass: Pass, id: i64) {
    match memory() {
        Some(m) => m.swept_to[pass as usize].store(id, Ordering::Release),
        None => {
            let (last, mut swept) = local();
            swept[pass as usize] = id;
            set_local(last, swept);
        }
    }
}
