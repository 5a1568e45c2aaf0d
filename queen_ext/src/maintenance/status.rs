//! The maintenance tasks as an operator sees them: whether each is on, who
//! holds it now, when it last started and finished, how its last run ended,
//! and when it is next due.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso_or_null as iso;
use crate::query;

/// One entry per task of `queen.maintenance_leases`, by name. The
/// retention task's also says how many partitions the last cycle's work
/// list held due and how many of them it put off (`partitionsDue`,
/// `partitionsBackedOff`; null before the first cycle since the server
/// started).
pub fn status(client: &mut SpiClient<'_>) -> Value {
    let rows = exec(client, query!("maintenance_status"), &[], &[]);
    let work_list = crate::maintenance::sweeper::metrics::retention_work_list();
    Value::Array(
        rows.map(|r| {
            let leased = spi::opt::<bool>(&r, "leased").unwrap_or(false);
            let task = spi::col::<String>(&r, "task");
            let mut entry = json!({
                "task": task,
                "enabled": spi::col::<bool>(&r, "enabled"),
                "running": leased,
                "holder": if leased { spi::opt::<String>(&r, "lease_holder") } else { None },
                "leaseExpiresAt": if leased { iso(spi::opt(&r, "lease_expires_us")) } else { Value::Null },
                "nextDueAt": iso(spi::opt(&r, "next_due_us")),
                "lastStartedAt": iso(spi::opt(&r, "last_started_us")),
                "lastFinishedAt": iso(spi::opt(&r, "last_finished_us")),
                "lastError": spi::opt::<String>(&r, "last_error"),
            });
            if entry["task"] == "retention" {
                entry["partitionsDue"] = json!(work_list.map(|w| w.0));
                entry["partitionsBackedOff"] = json!(work_list.map(|w| w.1));
            }
            entry
        })
        .collect(),
    )
}
