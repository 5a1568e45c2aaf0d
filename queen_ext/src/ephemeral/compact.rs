//! The retention cycle's compaction of live ephemeral queues: the message
//! path writes new rows and deletes none (docs/architecture.md, "MVCC"),
//! so it leaves behind the versions of tallies, bounds and cursors it
//! replaced, the messages below each partition's tail and the leases
//! settled or below the tail. A step deletes at most a batch of each kind
//! for a run of partitions; the cycle decides when a pass may run (only
//! once the deletions of the last one are reclaimable) and how far.

use pgrx::spi::SpiClient;

use super::queue;
use crate::pg::spi::{self, exec_keyed};

/// Partitions one step visits.
pub const STEP_PARTITIONS: i64 = 256;

/// Where a sweep stands: the partitions after (incarnation, partition)
/// come next; `(0, "")` is the first.
pub type Position = (i64, String);

/// What one step did.
#[derive(Debug, Default, Clone)]
pub struct Step {
    /// Rows deleted.
    pub deleted: i64,
    /// Where the next step goes on (the same partitions again when one kind
    /// filled its batch).
    pub next: Position,
    /// Whether the sweep came to the end of the partitions (the next step
    /// starts again at the first).
    pub wrapped: bool,
}

/// Whether the schema has anything to compact (0.6.0 on: versions).
pub fn applies() -> bool {
    queue::as_versions()
}

/// One step: at most `batch` rows of each kind, for the next
/// [`STEP_PARTITIONS`] partitions of live queues after `after`.
pub fn step(c: &mut SpiClient<'_>, after: &Position, batch: i64) -> Step {
    let row = exec_keyed(
        c,
        crate::query!("ephemeral_compact"),
        &[spi::INT8, spi::TEXT, spi::INT8, spi::INT8],
        &[
            after.0.into(),
            after.1.as_str().into(),
            STEP_PARTITIONS.into(),
            batch.into(),
        ],
    )
    .next()
    .expect("an aggregate answers a row");
    let deleted: i64 = spi::col(&row, "deleted");
    if spi::col::<i64>(&row, "fullest") >= batch {
        return Step {
            deleted,
            next: after.clone(),
            wrapped: false,
        };
    }
    let visited: i64 = spi::col(&row, "partitions");
    let last =
        spi::opt::<i64>(&row, "last_incarnation").zip(spi::opt::<String>(&row, "last_partition"));
    match last {
        Some(l) if visited == STEP_PARTITIONS => Step {
            deleted,
            next: l,
            wrapped: false,
        },
        _ => Step {
            deleted,
            next: (0, String::new()),
            wrapped: true,
        },
    }
}
