//! Messages deleted by an operator: tombstones (`queen.log_deleted`) over
//! offsets whose frames stay in their segments. Pop skips a tombstoned
//! offset for every consumer group and moves the cursor past it; retention
//! deletes the tombstones with the segments they point into.
//!
//! The table is new in 0.3.0, and this library also serves a 0.2.0 schema
//! until its update runs: the pop and retention paths ask [`present`]
//! first, and do what 0.2.0 did without it.

use pgrx::spi::SpiClient;

use crate::pg::spi::{self, exec};
use crate::query;

/// Whether the schema has the tombstone table (a catalogue-cache probe).
pub fn present() -> bool {
    spi::queen_table_exists(c"log_deleted")
}

/// Tombstones `offsets` of `pid` (the message `txn`); answers the offsets
/// that were not deleted already.
pub fn mark(client: &mut SpiClient<'_>, pid: i64, offsets: &[i64], txn: &str) -> Vec<i64> {
    exec(
        client,
        query!("deleted_insert"),
        &[spi::INT8, spi::INT8_ARRAY, spi::TEXT],
        &[pid.into(), offsets.to_vec().into(), txn.into()],
    )
    .map(|r| spi::col::<i64>(&r, "message_offset"))
    .collect()
}

/// Whether the message at `offset` of `pid` is deleted (false on a schema
/// without the table).
pub fn is_deleted(client: &mut SpiClient<'_>, pid: i64, offset: i64) -> bool {
    present()
        && exec(
            client,
            query!("deleted_at"),
            &[spi::INT8, spi::INT8],
            &[pid.into(), offset.into()],
        )
        .next()
        .is_some()
}

/// The deleted offsets of `pid` within `from..=to`, in order.
pub fn in_range(client: &mut SpiClient<'_>, pid: i64, from: i64, to: i64) -> Vec<i64> {
    exec(
        client,
        query!("deleted_in_range"),
        &[spi::INT8, spi::INT8, spi::INT8],
        &[pid.into(), from.into(), to.into()],
    )
    .map(|r| spi::col::<i64>(&r, "message_offset"))
    .collect()
}

/// Deletes the tombstones of `pid` at or below `end`: retention deleted the
/// segments they point into. Nothing on a schema without the table.
pub fn drop_through(client: &mut SpiClient<'_>, pid: i64, end: i64) {
    if !present() {
        return;
    }
    exec(
        client,
        query!("retention_step_delete_tombstones"),
        &[spi::INT8, spi::INT8],
        &[pid.into(), end.into()],
    );
}
