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
use crate::pg::settings;
use crate::pg::spi::{self, exec_keyed};

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

/// Forgets at most `batch` groups no pop has named for `idle` seconds,
/// oldest first; answers how many.
pub fn forget_groups(c: &mut SpiClient<'_>, idle: i64, batch: i64) -> i64 {
    exec_keyed(
        c,
        crate::query!("ephemeral_groups_expire"),
        &[spi::INT8, spi::INT8],
        &[idle.into(), batch.into()],
    )
    .next()
    .map_or(0, |r| spi::col::<i64>(&r, "forgotten"))
}

/// A queue's note older than an idle period: its incarnation, its name
/// (None: the incarnation has ended) and whether it is declared.
pub struct Idle {
    pub incarnation: i64,
    pub queue: Option<String>,
    pub declared: bool,
}

/// At most `batch` notes of queues no push or pop has named for `idle`
/// seconds, oldest first.
pub fn idle_queues(c: &mut SpiClient<'_>, idle: i64, batch: i64) -> Vec<Idle> {
    exec_keyed(
        c,
        crate::query!("ephemeral_queues_idle"),
        &[spi::INT8, spi::INT8],
        &[idle.into(), batch.into()],
    )
    .map(|r| Idle {
        incarnation: spi::col::<i64>(&r, "incarnation"),
        queue: spi::opt::<String>(&r, "queue"),
        declared: spi::col::<bool>(&r, "declared"),
    })
    .collect()
}

/// Takes the note of an idle queue that needs none (its incarnation ended,
/// or it is declared), or removes the queue when, under its lock, it holds
/// nothing and is still unused for `idle` seconds; whether it was removed.
/// The caller bounds the wait for the queue's lock: a queue some call holds
/// is in use.
pub fn expire_queue(c: &mut SpiClient<'_>, q: &Idle, idle: i64) -> bool {
    match &q.queue {
        Some(name) if !q.declared => remove_if_idle(c, name, q.incarnation, idle),
        _ => {
            forget(c, q.incarnation, 0);
            false
        }
    }
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
