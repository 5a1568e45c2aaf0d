//! The durable schedule and leader gate of a maintenance task: its row in
//! `queen.maintenance_leases`. One atomic UPDATE claims the task when it is
//! due, not leased and enabled, stamping a lease and a new fencing token; the
//! release advances `next_due_at` by exactly one period (or leaves it due
//! after an error) and is a no-op for a holder that was fenced off.

use pgrx::spi::SpiClient;

use crate::pg::spi::{self, exec};
use crate::query;

pub const RETENTION: &str = "retention";
pub const WATERMARK: &str = "retention_watermark";
pub const PARTITION_CLEANUP: &str = "partition_cleanup";

/// Claims `task` for `lease_ms`; the fencing token when claimed.
pub fn claim(client: &mut SpiClient<'_>, task: &str, holder: &str, lease_ms: i64) -> Option<i64> {
    exec(
        client,
        query!("retention_lease_claim"),
        &[spi::TEXT, spi::TEXT, spi::INT8],
        &[task.into(), holder.into(), lease_ms.into()],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "fencing_token"))
}

/// Ends the lease `token` holds. `period_ms` Some: the run succeeded and the
/// task is next due one period later (0: never again); None: the run failed
/// and the task stays due. False when the token was fenced off.
pub fn release(client: &mut SpiClient<'_>, task: &str, token: i64, period_ms: Option<i64>) -> bool {
    exec(
        client,
        query!("retention_lease_release"),
        &[spi::TEXT, spi::INT8, spi::INT8],
        &[task.into(), token.into(), period_ms.into()],
    )
    .next()
    .is_some()
}
