//! The operator's switches: surfaces paused for maintenance, kept in
//! `queen.system_state` so that every session and every front-end obeys
//! the same switch. A surface without a row runs.
//!
//! Every push, pop, KV call and timer schedule asks whether its surface is
//! paused, so the answer is cached in shared memory: one word holding the
//! paused surfaces, a valid bit and a generation. A change bumps the
//! generation (at once, and again when its transaction commits or aborts),
//! which invalidates the word; the next reader reads the table and stores
//! what it read only if the generation did not move meanwhile. So a reader
//! never keeps a value older than the last committed change. Sessions that
//! bypass the cache read the table: those of another database than the one
//! the cache serves, a transaction that changed a switch itself (its change
//! is not yet everybody's), and a snapshot older than the statement
//! (repeatable read and serializable).

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use pgrx::callbacks::PgXactCallbackEvent;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::spi::SpiClient;
use pgrx::PgAtomic;

use crate::pg::errors;
use crate::pg::spi::{self, exec};

/// A surface an operator can pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Pushes (JSON, binary, the pushes of a transaction, dead-letter
    /// replays): refused with 57000.
    Push,
    /// Pops: answered empty.
    Pop,
    /// The KV calls and a transaction's KV riders: refused with 57000.
    Kv,
    /// Timer schedules and reschedules (never cancels): refused with 57000.
    TimersSchedule,
    /// The sweepers' timer fire: due timers wait, nothing is lost.
    TimersFire,
    /// The ephemeral queues' writes (configure, reset, delete, push, pop,
    /// ack): refused with 57000; their reads still answer.
    Ephemeral,
}

impl Surface {
    pub const ALL: [Surface; 6] = [
        Surface::Push,
        Surface::Pop,
        Surface::Kv,
        Surface::TimersSchedule,
        Surface::TimersFire,
        Surface::Ephemeral,
    ];

    /// The surface's key in `queen.system_state`.
    pub fn key(self) -> &'static str {
        match self {
            Surface::Push => "push",
            Surface::Pop => "pop",
            Surface::Kv => "kv",
            Surface::TimersSchedule => "timers_schedule",
            Surface::TimersFire => "timers_fire",
            Surface::Ephemeral => "ephemeral",
        }
    }

    pub fn of_key(key: &str) -> Option<Surface> {
        Surface::ALL.into_iter().find(|s| s.key() == key)
    }

    fn bit(self) -> u64 {
        1 << (self as u32)
    }
}

/// The cache word: paused bits (low 8), the valid bit, the generation above.
const VALID: u64 = 1 << 8;
const GENERATION: u32 = 9;

pub struct Cache {
    /// The database the word describes (0: none yet).
    database: AtomicU32,
    word: AtomicU64,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache {
            database: AtomicU32::new(0),
            word: AtomicU64::new(0),
        }
    }
}

unsafe impl PGRXSharedMemory for Cache {}

static CACHE: PgAtomic<Cache> = unsafe { PgAtomic::new(c"queen_switches") };

// The macro tests the features of other PostgreSQL versions too.
#[allow(unexpected_cfgs)]
pub fn init_shmem() {
    pgrx::pg_shmem_init!(CACHE);
}

thread_local! {
    /// This transaction changed a switch: it reads the table until it ends.
    static CHANGED: Cell<bool> = const { Cell::new(false) };
}

/// The cache, when this session may use it.
fn cache() -> Option<&'static Cache> {
    if !crate::pg::shmem::preloaded() || CHANGED.with(Cell::get) {
        return None;
    }
    let read_committed = unsafe { pg_sys::XactIsoLevel } < pg_sys::XACT_REPEATABLE_READ as i32;
    if !read_committed {
        return None;
    }
    let c = CACHE.get();
    let me = unsafe { pg_sys::MyDatabaseId }.to_u32();
    match c
        .database
        .compare_exchange(0, me, Ordering::SeqCst, Ordering::SeqCst)
    {
        Ok(_) => Some(c),
        Err(db) if db == me => Some(c),
        Err(_) => None,
    }
}

/// The paused surfaces as bits, read from the table; none on a schema
/// without the table (a database not yet updated to 0.3.0).
fn read_table(client: &mut SpiClient<'_>) -> u64 {
    let present = exec(client, crate::query!("switches_present"), &[], &[])
        .next()
        .is_some_and(|r| spi::col::<bool>(&r, "present"));
    if !present {
        return 0;
    }
    exec(client, crate::query!("switches_read"), &[], &[])
        .filter(|r| spi::col::<bool>(r, "paused"))
        .filter_map(|r| Surface::of_key(&spi::col::<String>(&r, "key")))
        .fold(0, |bits, s| bits | s.bit())
}

/// The paused surfaces as bits.
fn paused_bits(client: &mut SpiClient<'_>) -> u64 {
    let Some(c) = cache() else {
        return read_table(client);
    };
    let seen = c.word.load(Ordering::SeqCst);
    if seen & VALID != 0 {
        return seen & 0xff;
    }
    let bits = read_table(client);
    // Stored only if no change came between the load and the read.
    let _ = c.word.compare_exchange(
        seen,
        (seen >> GENERATION << GENERATION) | VALID | bits,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    bits
}

/// Whether `surface` is paused.
pub fn is_paused(client: &mut SpiClient<'_>, surface: Surface) -> bool {
    paused_bits(client) & surface.bit() != 0
}

/// Refuses the call (57000) when `surface` is paused.
pub fn refuse_if_paused(client: &mut SpiClient<'_>, surface: Surface) {
    if is_paused(client, surface) {
        errors::paused(
            surface.key(),
            format!(
                "{} is paused for maintenance (queen.system_state {:?}); retry later",
                describe(surface),
                surface.key()
            ),
        );
    }
}

fn describe(surface: Surface) -> &'static str {
    match surface {
        Surface::Push => "pushing",
        Surface::Pop => "popping",
        Surface::Kv => "the KV store",
        Surface::TimersSchedule => "timer scheduling",
        Surface::TimersFire => "timer firing",
        Surface::Ephemeral => "the ephemeral queues",
    }
}

/// Every surface and whether it is paused, read from the table.
pub fn read_all(client: &mut SpiClient<'_>) -> Vec<(Surface, bool)> {
    let bits = read_table(client);
    Surface::ALL
        .into_iter()
        .map(|s| (s, bits & s.bit() != 0))
        .collect()
}

/// Pauses or resumes `surface`.
pub fn set(client: &mut SpiClient<'_>, surface: Surface, paused: bool) {
    exec(
        client,
        crate::query!("switches_write"),
        &[spi::TEXT, spi::BOOL],
        &[surface.key().into(), paused.into()],
    );
    let first = !CHANGED.with(|c| c.replace(true));
    invalidate();
    if first {
        pgrx::register_xact_callback(PgXactCallbackEvent::Commit, end_of_change);
        pgrx::register_xact_callback(PgXactCallbackEvent::Abort, end_of_change);
    }
}

/// Runs when a transaction that changed a switch ends: must not fail.
fn end_of_change() {
    CHANGED.with(|c| c.set(false));
    invalidate();
}

/// Moves the generation on and clears the valid bit.
fn invalidate() {
    if !crate::pg::shmem::preloaded() {
        return;
    }
    let c = CACHE.get();
    let _ = c
        .word
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| {
            Some(((w >> GENERATION) + 1) << GENERATION)
        });
}
