//! The watermark backfill and safety walk: re-derives `oldest_live_at` and
//! `oldest_txn_at` from the tables, in id-keyset batches, writing only the
//! rows that drifted (a healthy pass takes no row locks at all).

use pgrx::spi::SpiClient;
use serde::Serialize;

use crate::pg::spi::{self, exec};
use crate::query;

/// Partitions per walk statement.
pub const WALK_BATCH: i32 = 5000;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct WalkResult {
    /// The last id of this batch; the next batch starts after it.
    pub last_id: Option<i64>,
    pub fixed: i64,
    pub done: bool,
}

pub fn walk_batch(client: &mut SpiClient<'_>, after_id: i64, max_rows: i32) -> WalkResult {
    let row = exec(
        client,
        query!("retention_watermark_walk_batch"),
        &[spi::INT8, spi::INT4],
        &[after_id.into(), max_rows.into()],
    )
    .next()
    .expect("one row");
    let last_id: Option<i64> = spi::opt(&row, "last_id");
    let fixed: i64 = spi::col(&row, "fixed");
    let seen: i64 = spi::col(&row, "scanned");
    WalkResult {
        last_id,
        fixed,
        done: seen < max_rows as i64,
    }
}
