//! The retention cycle's compaction of fired timers: a fire marks its
//! timer done and deletes nothing (`maintenance::sweeper::drain`), so the
//! timer rows, their claims and their marks stay until a step here deletes
//! them, at most a batch of fired schedules a step. The cycle decides when
//! a pass may run (only once the deletions of the last one are
//! reclaimable) and how far.

use pgrx::spi::SpiClient;

use crate::pg::spi;

/// Whether the schema has anything to compact (0.10.0 on).
pub fn applies() -> bool {
    super::as_log()
}

/// One step: at most `batch` fired schedules. Answers the rows deleted and
/// the schedules among them (fewer than `batch`: none are left).
pub fn step(c: &mut SpiClient<'_>, batch: i64) -> (i64, i64) {
    let row = spi::exec(
        c,
        crate::query!("timers_compact"),
        &[spi::INT8],
        &[batch.into()],
    )
    .next()
    .expect("an aggregate answers a row");
    (spi::col(&row, "deleted"), spi::col(&row, "done"))
}
