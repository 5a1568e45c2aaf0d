//! The message path's counters, in shared memory: per (queue, consumer
//! group), how many push, pop and ack calls and messages, empty pops,
//! dead letters, transactions, and the lag pops saw. Push, pop, ack and
//! transaction bump them (a few relaxed atomic adds per call, no lock); the
//! metrics task takes them (each counter swapped to zero) once per
//! `queen.metrics_interval_ms` and writes the series. Best effort, like
//! any counter: what a rolled-back call counted stays counted, and what was
//! not yet taken is lost at a restart.
//!
//! The table has [`SLOTS`] entries, found by open addressing over at most
//! [`PROBES`] of them from the key's hash. A key that finds no place is
//! counted in the overflow entry, which the series carries in the
//! server-wide totals only. An entry idle for a whole interval is freed.
//!
//! Queue ids are a database's own, so an entry also keeps its database:
//! a take (the metrics task, or `queen_internal.metrics_sample()`) takes
//! only its own database's entries, and the overflow entry.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::PgAtomic;

/// Entries of the table: distinct (queue, consumer group) pairs counted
/// within one interval.
pub const SLOTS: usize = 2048;
/// Entries a key looks at before it falls back to the overflow entry.
pub const PROBES: usize = 32;
/// Bytes of a consumer group's name the table keeps (longer names are
/// counted under their first bytes).
pub const GROUP_BYTES: usize = 64;

/// What is counted, one atomic each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    PushRequests = 0,
    PushMessages,
    PopRequests,
    PopMessages,
    PopEmpty,
    AckRequests,
    AckSuccess,
    AckFailed,
    Dlq,
    Transactions,
    LagCount,
    LagSumMs,
    /// A maximum, not a sum.
    LagMaxMs,
}

/// The number of counters an entry has.
pub const COUNTS: usize = 13;

/// A key is free while 0 and being written while -1.
const FREE: i64 = 0;
const CLAIMING: i64 = -1;

#[repr(C)]
pub struct Slot {
    key: AtomicI64,
    /// The oid of the database whose queue this is.
    database: AtomicI64,
    queue_id: AtomicI64,
    group_len: AtomicI64,
    group: [AtomicU64; GROUP_BYTES / 8],
    counts: [AtomicI64; COUNTS],
}

#[repr(C)]
pub struct Table {
    slots: [Slot; SLOTS],
    overflow: [AtomicI64; COUNTS],
}

impl Default for Table {
    fn default() -> Table {
        // Every field is an atomic integer, for which zero is a valid value.
        unsafe { std::mem::zeroed() }
    }
}

unsafe impl PGRXSharedMemory for Table {}

static TABLE: PgAtomic<Table> = unsafe { PgAtomic::new(c"queen_message_counters") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(TABLE);
}

fn shared() -> Option<&'static Table> {
    crate::pg::shmem::preloaded().then(|| TABLE.get())
}

/// The table, when the library is preloaded and `queen.metrics_counters`
/// is on.
fn counting() -> Option<&'static Table> {
    if crate::pg::settings::metrics_counters() {
        shared()
    } else {
        None
    }
}

/// The group's name as the table keeps it: at most [`GROUP_BYTES`] bytes,
/// cut at a character boundary.
fn kept(group: &str) -> &str {
    let mut end = group.len().min(GROUP_BYTES);
    while !group.is_char_boundary(end) {
        end -= 1;
    }
    &group[..end]
}

/// This session's database, as an entry keeps it.
fn this_database() -> i64 {
    unsafe { pg_sys::MyDatabaseId }.to_u32() as i64
}

fn key_of(database: i64, queue_id: i64, group: &str) -> i64 {
    let seed = (queue_id as u64) ^ ((database as u64).rotate_left(40));
    let h = xxhash_rust::xxh3::xxh3_64_with_seed(group.as_bytes(), seed);
    // Positive and never FREE.
    ((h >> 1) as i64).max(1)
}

impl Slot {
    fn write_group(&self, group: &str) {
        let mut words = [0u64; GROUP_BYTES / 8];
        for (i, b) in group.bytes().enumerate() {
            words[i / 8] |= (b as u64) << ((i % 8) * 8);
        }
        for (w, v) in self.group.iter().zip(words) {
            w.store(v, Ordering::Relaxed);
        }
        self.group_len.store(group.len() as i64, Ordering::Relaxed);
    }

    fn read_group(&self) -> String {
        let len = (self.group_len.load(Ordering::Relaxed).max(0) as usize).min(GROUP_BYTES);
        let bytes: Vec<u8> = self
            .group
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .take(len)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// The counters of (queue_id, group), claiming an entry for them if need
/// be; the overflow counters when the table has no room near the key.
fn counters(t: &'static Table, queue_id: i64, group: &str) -> &'static [AtomicI64; COUNTS] {
    let group = kept(group);
    let database = this_database();
    let key = key_of(database, queue_id, group);
    let start = key as usize % SLOTS;
    for i in 0..PROBES {
        let slot = &t.slots[(start + i) % SLOTS];
        let k = slot.key.load(Ordering::Acquire);
        if k == key {
            return &slot.counts;
        }
        if k == FREE
            && slot
                .key
                .compare_exchange(FREE, CLAIMING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            slot.database.store(database, Ordering::Relaxed);
            slot.queue_id.store(queue_id, Ordering::Relaxed);
            slot.write_group(group);
            slot.key.store(key, Ordering::Release);
            return &slot.counts;
        }
    }
    &t.overflow
}

/// Adds to the counters of (queue_id, group): each pair a count and what
/// to add. `LagMaxMs` is raised to its value instead.
pub fn add(queue_id: i64, group: &str, what: &[(Count, i64)]) {
    let Some(t) = counting() else { return };
    let c = counters(t, queue_id, group);
    for &(k, v) in what {
        if v == 0 {
            continue;
        }
        if k == Count::LagMaxMs {
            c[k as usize].fetch_max(v, Ordering::Relaxed);
        } else {
            c[k as usize].fetch_add(v, Ordering::Relaxed);
        }
    }
}

/// One entry's counts as the metrics task took them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// 0 for the overflow entry.
    pub queue_id: i64,
    pub group: String,
    pub counts: [i64; COUNTS],
}

impl Taken {
    pub fn get(&self, k: Count) -> i64 {
        self.counts[k as usize]
    }
}

fn swap_all(c: &[AtomicI64; COUNTS]) -> [i64; COUNTS] {
    std::array::from_fn(|i| c[i].swap(0, Ordering::Relaxed))
}

/// Takes the counts of this database's entries and of the overflow entry
/// (each counter swapped to zero), freeing the entries that counted nothing since the last take. An add racing the
/// freeing of its entry may be lost. Empty when the library is not
/// preloaded.
pub fn take() -> Vec<Taken> {
    let Some(t) = shared() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let database = this_database();
    for slot in &t.slots {
        let k = slot.key.load(Ordering::Acquire);
        if k == FREE || k == CLAIMING || slot.database.load(Ordering::Relaxed) != database {
            continue;
        }
        let counts = swap_all(&slot.counts);
        if counts.iter().all(|&v| v == 0) {
            let _ = slot
                .key
                .compare_exchange(k, FREE, Ordering::AcqRel, Ordering::Relaxed);
            continue;
        }
        out.push(Taken {
            queue_id: slot.queue_id.load(Ordering::Relaxed),
            group: slot.read_group(),
            counts,
        });
    }
    let overflow = swap_all(&t.overflow);
    if overflow.iter().any(|&v| v != 0) {
        out.push(Taken {
            queue_id: 0,
            group: String::new(),
            counts: overflow,
        });
    }
    out
}
