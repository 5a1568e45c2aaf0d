//! The retention cycle's compaction of cursor states: every pop, ack,
//! renewal and seek leaves the state it replaced behind (the message path
//! deletes nothing, `catalog::cursors`), and this phase deletes those in
//! steps of at most `queen.retention_batch_size` rows, at most
//! `queen.retention_compact_max` a cycle.
//!
//! Which cursors: those the writers noted in shared memory since the last
//! pass (`catalog::replaced`), and [`SWEEP_CURSORS`] more a cycle taken in
//! id order, round the table, for any the set lost.
//!
//! When: a row deleted while a snapshot older than the deletion is open
//! anywhere in the database cannot be reclaimed, and deleting it only
//! turns a row a backward probe never reads into a dead one that vacuum
//! must pass over until the snapshot ends. So a pass runs only once the
//! deletions of the one before are reclaimable: the database's horizon
//! (what vacuum may remove, `GetOldestNonRemovableTransactionId`) has
//! passed the transaction id that followed it. While a snapshot is held,
//! one pass runs and the next waits for its release; the replaced states
//! stay live rows meanwhile, and the message path is as fast as before
//! (docs/retention.md, "Cursor states").

use pgrx::pg_sys;
use pgrx::spi::SpiClient;

use super::step::{with_lock_timeout, LOCK_NOT_AVAILABLE};
use std::ffi::CStr;

use crate::catalog::cursors;
use crate::catalog::replaced::{self, Pass};
use crate::ephemeral;
use crate::maintenance::unit::{Failure, Runner};
use crate::pg::spi;
use crate::query;
use crate::timers;

/// Cursors the sweep visits a cycle besides those noted (not measured: at
/// the default 5 s cadence, 10 000 cursors in about three minutes).
pub const SWEEP_CURSORS: i64 = 256;

/// Cursors one step names at most (its array parameter).
const STEP_CURSORS: usize = 1024;

/// What a cycle's compaction did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Compacted {
    /// Cursor states of the log deleted.
    pub deleted: i64,
    /// Rows of ephemeral queues deleted (`ephemeral::compact`).
    pub ephemeral: i64,
    /// The ephemeral pass waited: the last one's deletions are not
    /// reclaimable yet.
    pub ephemeral_deferred: bool,
    /// The pass waited: the last one's deletions are not reclaimable yet.
    pub deferred: bool,
    /// Rows of fired timers deleted (`timers::compact`).
    pub timers: i64,
    /// The timers' pass waited: the last one's deletions are not
    /// reclaimable yet.
    pub timers_deferred: bool,
}

/// Whether the horizon of `queen.<table>` has passed the last `pass` of
/// this database (always, when it has had none since the server started).
fn horizon_passed(pass: Pass, table: &CStr) -> bool {
    let Some(after) = replaced::last_pass(pass) else {
        return true;
    };
    let Some(oid) = spi::queen_table_oid(table) else {
        return false;
    };
    let lock = pg_sys::AccessShareLock as pg_sys::LOCKMODE;
    // SAFETY: the relation exists (just resolved, in this transaction) and
    // is opened and closed here under a lock this transaction keeps.
    let horizon = unsafe {
        let rel = pg_sys::relation_open(oid, lock);
        let horizon = pg_sys::GetOldestNonRemovableTransactionId(rel);
        pg_sys::relation_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        horizon
    };
    !unsafe { pg_sys::TransactionIdPrecedes(horizon, after.into()) }
}

/// Notes the end of a pass that deleted something.
fn passed(pass: Pass) {
    // SAFETY: reads the shared next transaction id under its own lock.
    let next = unsafe { pg_sys::ReadNextFullTransactionId() }.value as u32;
    replaced::set_last_pass(pass, next);
}

/// The cursors the sweep visits this cycle: the next [`SWEEP_CURSORS`]
/// after where it stopped, from the first again once it reaches the end.
fn sweep(client: &mut SpiClient<'_>) -> Vec<i64> {
    let after = replaced::swept_to(Pass::States);
    let ids: Vec<i64> = spi::exec(
        client,
        query!("cursor_ids_after"),
        &[spi::INT8, spi::INT8],
        &[after.into(), SWEEP_CURSORS.into()],
    )
    .map(|r| spi::col::<i64>(&r, "id"))
    .collect();
    let next = match ids.last() {
        Some(&last) if ids.len() as i64 == SWEEP_CURSORS => last,
        _ => 0,
    };
    replaced::set_swept_to(Pass::States, next);
    ids
}

/// How long a step waits for a state another transaction holds locked
/// before it is made again passing such states by (not measured: a lock
/// on a replaced state is held by a call that is about to let it go).
const LOCK_WAIT: &str = "20ms";

/// One step: deletes at most `batch` replaced states of `cursors`; answers
/// how many. With `skipping`, states another transaction holds are passed
/// by (each is locked first); without, waited for at most [`LOCK_WAIT`]
/// (then `lock_not_available`).
fn step(client: &mut SpiClient<'_>, cursors: &[i64], batch: i32, skipping: bool) -> i64 {
    let args = [cursors.to_vec().into(), batch.into()];
    let types = [spi::INT8_ARRAY, spi::INT4];
    if skipping {
        return spi::exec_keyed(
            client,
            query!("cursor_states_compact_skipping"),
            &types,
            &args,
        )
        .len() as i64;
    }
    with_lock_timeout(client, LOCK_WAIT, |c| {
        spi::exec_keyed(c, query!("cursor_states_compact_waiting"), &types, &args).len() as i64
    })
}

/// [`step`], made again passing locked states by when it met one.
fn step_settled<R: Runner>(runner: &mut R, cursors: &[i64], batch: i32) -> Result<i64, Failure> {
    match runner.run(|c| step(c, cursors, batch, false)) {
        Err(e) if e.sqlstate == LOCK_NOT_AVAILABLE => runner.run(|c| step(c, cursors, batch, true)),
        other => other,
    }
}

/// The cycle's compaction: a pass over the log's cursor states (at most
/// `max`), one over the ephemeral queues' rows (at most `ephemeral_max`)
/// and one over fired timers (at most `timers_max` rows), in steps of
/// `batch`, each when its last one's deletions are reclaimable.
pub fn compact<R: Runner>(
    runner: &mut R,
    batch: i32,
    max: i64,
    ephemeral_max: i64,
    timers_max: i64,
) -> Result<Compacted, Failure> {
    let mut done = Compacted::default();
    if max > 0 && runner.run(|_| cursors::as_states())? {
        if runner.run(|_| horizon_passed(Pass::States, c"log_cursor_states"))? {
            let outcome = compact_states(runner, batch, max, &mut done);
            if done.deleted > 0 {
                passed(Pass::States);
            }
            outcome?;
        } else {
            done.deferred = true;
        }
    }
    if ephemeral_max > 0 && runner.run(|_| ephemeral::compact::applies())? {
        if runner.run(|_| horizon_passed(Pass::Ephemeral, c"ephemeral_tallies"))? {
            let outcome = compact_ephemeral(runner, batch as i64, ephemeral_max, &mut done);
            if done.ephemeral > 0 {
                passed(Pass::Ephemeral);
            }
            outcome?;
        } else {
            done.ephemeral_deferred = true;
        }
    }
    if timers_max > 0 && runner.run(|_| timers::compact::applies())? {
        if runner.run(|_| horizon_passed(Pass::Timers, c"log_timers_done"))? {
            let outcome = compact_timers(runner, batch as i64, timers_max, &mut done);
            if done.timers > 0 {
                passed(Pass::Timers);
            }
            outcome?;
        } else {
            done.timers_deferred = true;
        }
    }
    Ok(done)
}

/// The timers' part of a pass: steps of `batch` fired schedules until none
/// is left or `max` rows went.
fn compact_timers<R: Runner>(
    runner: &mut R,
    batch: i64,
    max: i64,
    done: &mut Compacted,
) -> Result<(), Failure> {
    while done.timers < max {
        let (deleted, schedules) =
            runner.run(|c| with_lock_timeout(c, LOCK_WAIT, |c| timers::compact::step(c, batch)))?;
        done.timers += deleted;
        if schedules < batch {
            break;
        }
    }
    Ok(())
}

/// The ephemeral queues' part of a pass: steps over the partitions of live
/// queues, from the queue where the last pass stopped, until the sweep
/// comes to the end or `max` rows went.
fn compact_ephemeral<R: Runner>(
    runner: &mut R,
    batch: i64,
    max: i64,
    done: &mut Compacted,
) -> Result<(), Failure> {
    let mut at = (replaced::swept_to(Pass::Ephemeral), String::new());
    while done.ephemeral < max {
        let room = (max - done.ephemeral).min(batch);
        let step = runner
            .run(|c| with_lock_timeout(c, LOCK_WAIT, |c| ephemeral::compact::step(c, &at, room)));
        match step {
            Ok(s) => {
                done.ephemeral += s.deleted;
                at = s.next;
                // A pass that stops short goes on at this queue next time.
                replaced::set_swept_to(Pass::Ephemeral, (at.0 - 1).max(0));
                if s.wrapped {
                    break;
                }
            }
            // A reset's cleanup deletes the same rows: the next pass.
            Err(e) if e.sqlstate == LOCK_NOT_AVAILABLE => break,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The log's part of a pass: at most `max` states, in steps of `batch`.
/// The cursors it had no room for are noted again for the next cycle.
fn compact_states<R: Runner>(
    runner: &mut R,
    batch: i32,
    max: i64,
    done: &mut Compacted,
) -> Result<(), Failure> {
    let mut ids = replaced::take(replaced::SLOTS);
    ids.extend(runner.run(sweep)?);
    ids.sort_unstable();
    ids.dedup();
    let mut chunks = ids.chunks(STEP_CURSORS);
    let mut left: Vec<i64> = Vec::new();
    let outcome = loop {
        let Some(chunk) = chunks.next() else {
            break Ok(());
        };
        if done.deleted >= max {
            left.extend_from_slice(chunk);
            continue;
        }
        // A chunk's steps go on while one deletes a whole batch.
        let r = loop {
            let room = (max - done.deleted).min(batch as i64) as i32;
            match step_settled(runner, chunk, room) {
                Ok(n) => {
                    done.deleted += n;
                    if n < room as i64 {
                        break Ok(());
                    }
                    if done.deleted >= max {
                        left.extend_from_slice(chunk);
                        break Ok(());
                    }
                }
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = r {
            left.extend_from_slice(chunk);
            left.extend(chunks.flatten().copied());
            break Err(e);
        }
    };
    for id in left {
        replaced::note(id);
    }
    outcome
}
