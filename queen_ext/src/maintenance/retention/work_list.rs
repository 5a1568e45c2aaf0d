//! The plan of one retention cycle, from one query and one `now()`: a rule
//! row per queue carrying its four cutoffs (NULL disables a rule), plus per
//! phase only the due partitions, found through the per-queue partial
//! indexes on the watermark columns, oldest first. Its cost follows the work
//! (queues and due partitions), not the number of partitions.

use std::collections::HashMap;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;

use crate::pg::spi;
use crate::query;

/// The sidecar is never purged younger than this, whatever the queue says: a
/// late ack or a retried push may still need the hash. (Seconds.)
pub const TXN_FLOOR_SECONDS: i64 = 900;

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub all_cutoff: Option<TimestampWithTimeZone>,
    pub completed_cutoff: Option<TimestampWithTimeZone>,
    pub txn_cutoff: Option<TimestampWithTimeZone>,
    pub max_wait_cutoff: Option<TimestampWithTimeZone>,
    /// Dead letters failed before this go (NULL: kept forever).
    pub dlq_cutoff: Option<TimestampWithTimeZone>,
}

impl Rule {
    /// The cutoffs of a row holding the columns of [`rules_sql`].
    pub fn from_row(row: &pgrx::spi::SpiHeapTupleData<'_>) -> Rule {
        Rule {
            all_cutoff: spi::opt(row, "all_cutoff"),
            completed_cutoff: spi::opt(row, "completed_cutoff"),
            txn_cutoff: spi::opt(row, "txn_cutoff"),
            max_wait_cutoff: spi::opt(row, "max_wait_cutoff"),
            dlq_cutoff: spi::opt(row, "dlq_cutoff"),
        }
    }
}

#[derive(Debug, Default)]
pub struct WorkList {
    pub rules: HashMap<i64, Rule>,
    /// (partition, queue) per phase: 1 retention, 2 sidecar purge, 3 max-wait eviction.
    pub phases: [Vec<(i64, i64)>; 3],
    /// Queues holding dead letters past their DLQ retention.
    pub dlq_due: Vec<i64>,
}

impl WorkList {
    pub fn due(&self) -> usize {
        self.phases.iter().map(Vec::len).sum()
    }
}

/// The select-list computing a queue's four cutoffs from `q` (queues) and
/// `c.now`: what each queue's options mean for retention. This is the
/// policy; the steps only take cutoffs.
pub fn rules_sql() -> String {
    query!("retention_rules")
        .replace("{floor}", &TXN_FLOOR_SECONDS.to_string())
        .replace(
            "{failed_floor}",
            &crate::pg::settings::failed_retention_seconds().to_string(),
        )
}

/// The work-list query with the due cap written in as a literal: a bound
/// parameter would make the planner guess its selectivity.
pub fn query(cap: i64) -> String {
    query!("retention_work_list")
        .replace("{rules}", &rules_sql())
        .replace("{cap}", &cap.to_string())
}

pub fn build(client: &mut SpiClient<'_>, cap: i64) -> WorkList {
    let sql = query(cap);
    let mut list = WorkList::default();
    // Not a kept plan: the text changes with the cap.
    let rows = client
        .update(sql.as_str(), None, &[])
        .unwrap_or_else(|e| panic!("retention work list: {e}"));
    let mut due: [Vec<(i64, i64, i64)>; 3] = Default::default();
    for row in rows {
        let phase: i32 = spi::col(&row, "phase");
        let queue: i64 = spi::col(&row, "queue_id");
        if phase == 4 {
            list.dlq_due.push(queue);
        } else if phase == 0 {
            list.rules.insert(queue, Rule::from_row(&row));
        } else {
            let pid: i64 = spi::col(&row, "partition_id");
            let us: i64 = spi::col(&row, "watermark_us");
            due[(phase - 1) as usize].push((us, pid, queue));
        }
    }
    for (i, mut d) in due.into_iter().enumerate() {
        d.sort_unstable();
        list.phases[i] = d.into_iter().map(|(_, pid, q)| (pid, q)).collect();
    }
    list
}
