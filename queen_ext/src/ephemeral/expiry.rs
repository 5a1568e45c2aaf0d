//! Idle ephemeral queues and groups (docs/ephemeral.md, "Idle queues and
//! groups"). A push or a pop notes that it named its queue and, a pop, its
//! group (`queen.ephemeral_seen`), writing a note only when it is older than
//! [`note_every`]: never a new version per call. The retention cycle then
//! forgets the groups no pop has named for `queen.ephemeral_group_idle_seconds`
//! (so what the other groups have read is removed without waiting for them)
//! and removes the implicit queues that hold nothing and that no push or pop
//! has named for `queen.ephemeral_implicit_idle_seconds`. Declared queues
//! are never removed.

use pgrx::spi::SpiClient;

use super::queue;
use crate::maintenance::retention::step::{with_lock_timeout, LOCK_NOT_AVAILABLE};
use crate::maintenance::unit::{Failure, Runner};
use crate::pg::settings;
use crate::pg::spi::{self, exec_keyed};

/// How long the cycle waits for a queue's lock before passing the queue by
/// (a queue some call holds is in use).
const QUEUE_LOCK_WAIT: &str = "20ms";

/// Cleanup steps of ended incarnations a cycle runs at most (each removes
/// at most `queen.ephemeral_cleanup_batch` rows of each kind).
pub const RETIRED_STEPS: usize = 16;

/// Whether the schema keeps the notes (0.8.0 on). Until a database is
/// updated, nothing of its ephemeral queues expires.
pub fn noted() -> bool {
    spi::queen_table_exists(c"ephemeral_seen")
}

/// How old a note may be before a push or a pop writes it again: a quarter
/// of the shorter idle period that is on, at least a second (an hour when
/// both are off).
pub fn note_every() -> i64 {
    [
        settings::ephemeral_implicit_idle_seconds(),
        settings::ephemeral_group_idle_seconds(),
    ]
    .into_iter()
    .filter(|&s| s > 0)
    .min()
    .map_or(3600, |s| (s / 4).max(1))
}

/// Notes that a push (`group` None) or a pop of `group` named the queue of
/// incarnation `inc` (`declared`: it never expires, only its group is
/// noted); a pop's group is registered with the queue.
pub fn touch(c: &mut SpiClient<'_>, inc: i64, group: Option<&str>, declared: bool) {
    if !noted() {
        if let Some(g) = group {
            exec_keyed(
                c,
                crate::query!("ephemeral_group_register"),
                &[spi::INT8, spi::TEXT],
                &[inc.into(), g.into()],
            );
        }
        return;
    }
    exec_keyed(
        c,
        crate::query!("ephemeral_seen_touch"),
        &[spi::INT8, spi::TEXT, spi::INT8, spi::BOOL],
        &[
            inc.into(),
            group.into(),
            note_every().into(),
            declared.into(),
        ],
    );
}

/// What a cycle's expiry did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Expired {
    /// Groups forgotten.
    pub groups: i64,
    /// Implicit queues removed.
    pub queues: i64,
}

/// The cycle's expiry: at most `queen.ephemeral_cleanup_batch` groups and
/// as many queues, then at most [`RETIRED_STEPS`] cleanup steps of ended
/// incarnations (a removed queue's rows, and a reset or deleted one's when
/// no call came to remove them).
pub fn expire<R: Runner>(runner: &mut R) -> Result<Expired, Failure> {
    let mut done = Expired::default();
    if !runner.run(|_| noted())? {
        return Ok(done);
    }
    let batch = settings::ephemeral_cleanup_batch();
    let group_idle = settings::ephemeral_group_idle_seconds();
    if group_idle > 0 {
        done.groups = runner.run(|c| {
            exec_keyed(
                c,
                crate::query!("ephemeral_groups_expire"),
                &[spi::INT8, spi::INT8],
                &[group_idle.into(), batch.into()],
            )
            .next()
            .map_or(0, |r| spi::col::<i64>(&r, "forgotten"))
        })?;
    }
    let queue_idle = settings::ephemeral_implicit_idle_seconds();
    if queue_idle > 0 {
        let idle: Vec<(i64, Option<String>, bool)> = runner.run(|c| {
            exec_keyed(
                c,
                crate::query!("ephemeral_queues_idle"),
                &[spi::INT8, spi::INT8],
                &[queue_idle.into(), batch.into()],
            )
            .map(|r| {
                (
                    spi::col::<i64>(&r, "incarnation"),
                    spi::opt::<String>(&r, "queue"),
                    spi::col::<bool>(&r, "declared"),
                )
            })
            .collect()
        })?;
        for (inc, name, declared) in idle {
            let removed = match name {
                // Ended, or declared since: the note has no use.
                Some(q) if !declared => runner.run(|c| {
                    with_lock_timeout(c, QUEUE_LOCK_WAIT, |c| {
                        remove_if_idle(c, &q, inc, queue_idle)
                    })
                }),
                _ => runner.run(|c| {
                    forget(c, inc, 0);
                    false
                }),
            };
            match removed {
                Ok(true) => done.queues += 1,
                Ok(false) => {}
                // In use: it is not idle.
                Err(e) if e.sqlstate == LOCK_NOT_AVAILABLE => {}
                Err(e) => return Err(e),
            }
        }
    }
    for _ in 0..RETIRED_STEPS {
        if !runner.run(queue::cleanup_retired_step)? {
            break;
        }
    }
    Ok(done)
}

/// Deletes the note of incarnation `inc` when it is older than `idle`
/// seconds; whether it went.
fn forget(c: &mut SpiClient<'_>, inc: i64, idle: i64) -> bool {
    exec_keyed(
        c,
        crate::query!("ephemeral_seen_forget"),
        &[spi::INT8, spi::INT8],
        &[inc.into(), idle.into()],
    )
    .next()
    .is_some()
}

/// Removes the implicit queue `queue` (incarnation `inc`) when, under its
/// lock, it holds nothing and is still unused for `idle` seconds; a queue
/// that holds messages is looked at again an idle period later.
fn remove_if_idle(c: &mut SpiClient<'_>, queue: &str, inc: i64, idle: i64) -> bool {
    let Some(s) = queue::lock(c, queue) else {
        forget(c, inc, 0);
        return false;
    };
    if s.incarnation != inc {
        forget(c, inc, 0);
        return false;
    }
    if s.depth > 0 {
        exec_keyed(
            c,
            crate::query!("ephemeral_seen_again"),
            &[spi::INT8],
            &[inc.into()],
        );
        return false;
    }
    // Holding the lock every push and pop takes first, this sees each one
    // that named the queue: a note written since is not idle.
    if !forget(c, inc, idle) {
        return false;
    }
    queue::retire(c, queue).is_some()
}
