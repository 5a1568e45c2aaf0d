//! The retention cycle's phase 7: idle ephemeral groups and queues
//! (`ephemeral::expiry`, docs/ephemeral.md "Idle queues and groups").

use super::step::{with_lock_timeout, LOCK_NOT_AVAILABLE};
use crate::ephemeral::{expiry, queue};
use crate::maintenance::unit::{Failure, Runner};
use crate::pg::settings;

/// How long the cycle waits for a queue's lock before passing the queue by
/// (a queue some call holds is in use).
const QUEUE_LOCK_WAIT: &str = "20ms";

/// Cleanup steps of ended incarnations a cycle runs at most (each removes
/// at most `queen.ephemeral_cleanup_batch` rows of each kind).
pub const RETIRED_STEPS: usize = 16;

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
    if !runner.run(|_| expiry::noted())? {
        return Ok(done);
    }
    let batch = settings::ephemeral_cleanup_batch();
    let group_idle = settings::ephemeral_group_idle_seconds();
    if group_idle > 0 {
        done.groups = runner.run(|c| expiry::forget_groups(c, group_idle, batch))?;
    }
    let queue_idle = settings::ephemeral_implicit_idle_seconds();
    if queue_idle > 0 {
        for q in runner.run(|c| expiry::idle_queues(c, queue_idle, batch))? {
            let removed = runner.run(|c| {
                with_lock_timeout(c, QUEUE_LOCK_WAIT, |c| {
                    expiry::expire_queue(c, &q, queue_idle)
                })
            });
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
