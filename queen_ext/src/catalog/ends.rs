//! The log's end offsets in shared memory: for a partition, an upper bound
//! of its last offset (its newest segment's end), and an epoch that moves
//! whenever a cursor may have moved back. A pop's candidate scan uses them
//! to pass by the partitions it found done for its group (every offset up
//! to the end committed) without probing their cursor and newest segment
//! again: such a partition is still done while its bound is the end it was
//! found done at and the epoch has not moved (`engine::pop`'s memo).
//!
//! Why a bound never understates a partition's end: a push raises it to
//! the end it writes (it holds the partition's lock, so the end is exact)
//! before its transaction commits, and a bound only rises. A bound is also
//! made by a read of the partition's newest segment when none exists yet
//! (after a restart), and only then: had a push made one first, the read
//! leaves it; had the read made one first, the push raises it. An entry is
//! never evicted while its partition lives, so a read never makes one again
//! below what a push raised; the entries of deleted partitions are
//! forgotten (left as tombstones a look passes over and a new entry may
//! take). When the table is full, a partition without an entry is simply
//! never passed by. A push that is rolled back leaves its bound too high,
//! which only costs a probe.
//!
//! Why the epoch covers every way back: a cursor moves back only by a seek
//! or by being deleted (a group's deletion; a queue's, whose partitions
//! never come back). Those bump the epoch once their transaction has
//! committed (before its locks are released), and a pop reads the epoch
//! before the snapshot of the statement that found a partition done: a
//! seek committed after that snapshot has moved the epoch by the time the
//! pop's memo is used. One that commits through `COMMIT PREPARED` bumps it
//! at `PREPARE` only; the memo's age bound (`queen.pop_memo_ms`) covers it.
//!
//! The table has [`SLOTS`] entries, found by open addressing over at most
//! [`PROBES`] of them from the key's hash, each keyed by (database,
//! partition id). Without `shared_preload_libraries` there is no table:
//! nothing is passed by.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use pgrx::callbacks::PgXactCallbackEvent;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::PgAtomic;

/// Partitions the table keeps a bound for, over every database: four
/// parts of [`PART_SLOTS`] (a part is built on the postmaster's stack when
/// shared memory is made, so none may be large).
pub const SLOTS: usize = PARTS * PART_SLOTS;
const PARTS: usize = 4;
const PART_SLOTS: usize = 16384;
/// Entries a key looks at before it finds no place.
pub const PROBES: usize = 32;
/// How long a look waits for an entry being claimed by another backend
/// (a few stores) before it gives the table up.
const CLAIM_SPINS: usize = 100_000;

const FREE: i64 = 0;
const CLAIMING: i64 = -1;
/// An entry forgotten (its partition deleted): a look passes over it, and
/// a claim may take it. It never becomes FREE again: a look stops at the
/// first FREE slot, and an entry past it would be missed.
const TOMBSTONE: i64 = -2;

#[repr(C)]
pub struct Slot {
    key: AtomicI64,
    database: AtomicI64,
    pid: AtomicI64,
    end: AtomicI64,
}

impl Slot {
    /// Whether this slot, whose key was read as `key`, is the entry of
    /// (`database`, `pid`).
    fn holds(&self, key: i64, database: i64, pid: i64) -> bool {
        key > 0
            && self.pid.load(Ordering::Relaxed) == pid
            && self.database.load(Ordering::Relaxed) == database
    }
}

#[repr(C)]
pub struct Part {
    slots: [Slot; PART_SLOTS],
}

#[repr(C)]
#[derive(Default)]
pub struct Head {
    epoch: AtomicU64,
    /// Set when a look could not tell whether an entry exists (a claim
    /// that never finished): no bound is trusted again until a restart.
    broken: AtomicBool,
}

impl Default for Part {
    fn default() -> Part {
        // Every field is an atomic, for which zero is a valid value.
        unsafe { std::mem::zeroed() }
    }
}

unsafe impl PGRXSharedMemory for Part {}
unsafe impl PGRXSharedMemory for Head {}

static HEAD: PgAtomic<Head> = unsafe { PgAtomic::new(c"queen_partition_ends") };
static PART0: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_partition_ends_0") };
static PART1: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_partition_ends_1") };
static PART2: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_partition_ends_2") };
static PART3: PgAtomic<Part> = unsafe { PgAtomic::new(c"queen_partition_ends_3") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(HEAD);
    pgrx::pg_shmem_init!(PART0);
    pgrx::pg_shmem_init!(PART1);
    pgrx::pg_shmem_init!(PART2);
    pgrx::pg_shmem_init!(PART3);
}

/// The table, as its head and its parts.
#[derive(Clone, Copy)]
struct Table {
    head: &'static Head,
    parts: [&'static Part; PARTS],
}

impl Table {
    fn slot(&self, i: usize) -> &'static Slot {
        &self.parts[i / PART_SLOTS].slots[i % PART_SLOTS]
    }
}

fn shared() -> Option<Table> {
    if !crate::pg::shmem::preloaded() {
        return None;
    }
    let head = HEAD.get();
    if head.broken.load(Ordering::Acquire) {
        return None;
    }
    Some(Table {
        head,
        parts: [PART0.get(), PART1.get(), PART2.get(), PART3.get()],
    })
}

fn this_database() -> i64 {
    unsafe { pg_sys::MyDatabaseId }.to_u32() as i64
}

fn key_of(database: i64, pid: i64) -> i64 {
    let h = xxhash_rust::xxh3::xxh3_64_with_seed(&pid.to_le_bytes(), database as u64);
    // Positive: never FREE, CLAIMING or TOMBSTONE.
    ((h >> 1) as i64).max(1)
}

enum Found {
    At(&'static Slot),
    /// Absent; the first slot on its probe path a claim may take (a
    /// forgotten entry, or the free slot that ended the look), if any.
    Absent(Option<&'static Slot>),
}

/// The entry of `pid`, or where it would go. None when a claim by another
/// backend did not finish (the table is then given up).
fn find(t: Table, pid: i64) -> Option<Found> {
    let database = this_database();
    let key = key_of(database, pid);
    let start = key as usize % SLOTS;
    let mut reusable: Option<&'static Slot> = None;
    for i in 0..PROBES {
        let slot = t.slot((start + i) % SLOTS);
        let k = settled_key(t, slot)?;
        if k == FREE {
            return Some(Found::Absent(reusable.or(Some(slot))));
        }
        if k == TOMBSTONE {
            reusable = reusable.or(Some(slot));
            continue;
        }
        if k == key && slot.holds(k, database, pid) {
            return Some(Found::At(slot));
        }
    }
    Some(Found::Absent(reusable))
}

/// `slot`'s key once no claim is under way on it; None when a claim never
/// finished (the table is then given up).
fn settled_key(t: Table, slot: &'static Slot) -> Option<i64> {
    let mut k = slot.key.load(Ordering::Acquire);
    let mut spins = 0;
    while k == CLAIMING {
        spins += 1;
        if spins > CLAIM_SPINS {
            t.head.broken.store(true, Ordering::Release);
            return None;
        }
        std::hint::spin_loop();
        k = slot.key.load(Ordering::Acquire);
    }
    Some(k)
}

/// Puts `pid`'s entry with bound `end` into `slot` if it is still free;
/// otherwise looks again (another backend may have put it there).
fn claim(t: Table, pid: i64, end: i64, raise: bool) {
    let database = this_database();
    let key = key_of(database, pid);
    // A few rounds: each either claims or finds the slot taken.
    for _ in 0..PROBES {
        match find(t, pid) {
            None | Some(Found::Absent(None)) => return,
            Some(Found::At(slot)) => {
                if raise {
                    slot.end.fetch_max(end, Ordering::AcqRel);
                }
                return;
            }
            Some(Found::Absent(Some(slot))) => {
                let was = slot.key.load(Ordering::Acquire);
                if (was == FREE || was == TOMBSTONE)
                    && slot
                        .key
                        .compare_exchange(was, CLAIMING, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    slot.database.store(database, Ordering::Relaxed);
                    slot.pid.store(pid, Ordering::Relaxed);
                    slot.end.store(end, Ordering::Relaxed);
                    slot.key.store(key, Ordering::Release);
                    return;
                }
            }
        }
    }
}

/// Raises `pid`'s bound to `end`, the end of a segment this transaction
/// wrote holding the partition's lock (before it commits).
pub fn raise(pid: i64, end: i64) {
    if let Some(t) = shared() {
        claim(t, pid, end, true);
    }
}

/// Makes `pid`'s bound `end` (its newest segment's end, as a read saw it)
/// when it has none; leaves one that exists as it is.
pub fn learn(pid: i64, end: i64) {
    if let Some(t) = shared() {
        claim(t, pid, end, false);
    }
}

/// Forgets the bounds of the partitions `pids`, about to be deleted (their
/// ids are never drawn again), so that their entries serve others. A
/// deletion that is rolled back leaves its partitions without an entry,
/// which only means they are probed, until a push or a read makes one.
pub fn forget(pids: &[i64]) {
    let Some(t) = shared() else { return };
    let database = this_database();
    for &pid in pids {
        let start = key_of(database, pid) as usize % SLOTS;
        for i in 0..PROBES {
            let slot = t.slot((start + i) % SLOTS);
            let Some(k) = settled_key(t, slot) else {
                return;
            };
            if k == FREE {
                break;
            }
            if slot.holds(k, database, pid) {
                let _ =
                    slot.key
                        .compare_exchange(k, TOMBSTONE, Ordering::AcqRel, Ordering::Acquire);
            }
        }
    }
}

/// `pid`'s bound, when the table has one.
pub fn bound(pid: i64) -> Option<i64> {
    let t = shared()?;
    match find(t, pid)? {
        Found::At(slot) => Some(slot.end.load(Ordering::Acquire)),
        Found::Absent(_) => None,
    }
}

/// The epoch (None without the table): a memo made at one epoch is not
/// used at another.
pub fn epoch() -> Option<u64> {
    shared().map(|t| t.head.epoch.load(Ordering::Acquire))
}

thread_local! {
    /// Whether this transaction moved a cursor back (its bump is due).
    static MOVED_BACK: Cell<bool> = const { Cell::new(false) };
}

/// Whether this transaction has moved a cursor back (or deleted one): its
/// own pops pass nothing by until it ends.
pub fn moving_back() -> bool {
    MOVED_BACK.with(Cell::get)
}

/// Notes that this transaction may move a cursor back (a seek) or delete
/// one: the epoch moves when it commits (or prepares).
pub fn cursors_moved_back() {
    if shared().is_none() || MOVED_BACK.with(|m| m.replace(true)) {
        return;
    }
    let bump = || {
        if MOVED_BACK.with(|m| m.replace(false)) {
            if let Some(t) = shared() {
                t.head.epoch.fetch_add(1, Ordering::AcqRel);
            }
        }
    };
    pgrx::register_xact_callback(PgXactCallbackEvent::Commit, bump);
    pgrx::register_xact_callback(PgXactCallbackEvent::Prepare, bump);
    pgrx::register_xact_callback(PgXactCallbackEvent::Abort, || {
        MOVED_BACK.with(|m| m.set(false));
    });
}
