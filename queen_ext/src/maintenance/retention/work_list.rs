//! The plan of one retention cycle, from one query and one `now()`: a rule
//! row per queue carrying its four cutoffs (NULL disables a rule), plus per
//! phase only the due partitions, found through the per-queue partial
//! indexes on the watermark columns, oldest first. Its cost follows the work
//! (queues and due partitions), not the number of partitions.

use std::collections::HashMap;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;

/// The sidecar is never purged younger than this, whatever the queue says: a
/// late ack or a retried push may still need the hash. (Seconds.)
pub const TXN_FLOOR_SECONDS: i64 = 900;

/// What each queue's options mean for retention. This is the policy; the
/// steps only take cutoffs.
const RULES: &str = "
    CASE WHEN q.retention_enabled AND q.retention_seconds > 0
         THEN c.now - make_interval(secs => q.retention_seconds) END AS all_cutoff,
    CASE WHEN q.retention_enabled AND q.completed_retention_seconds > 0
         THEN c.now - make_interval(secs => q.completed_retention_seconds) END AS completed_cutoff,
    c.now - make_interval(secs => GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, {floor})) AS txn_cutoff,
    CASE WHEN q.max_wait_time_seconds > 0
         THEN c.now - make_interval(secs => q.max_wait_time_seconds) END AS max_wait_cutoff,
    CASE WHEN q.dlq_retention_seconds > 0
         THEN c.now - make_interval(secs => GREATEST(q.dlq_retention_seconds, {failed_floor})) END AS dlq_cutoff";

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub all_cutoff: Option<TimestampWithTimeZone>,
    pub completed_cutoff: Option<TimestampWithTimeZone>,
    pub txn_cutoff: Option<TimestampWithTimeZone>,
    pub max_wait_cutoff: Option<TimestampWithTimeZone>,
    /// Dead letters failed before this go (NULL: kept forever).
    pub dlq_cutoff: Option<TimestampWithTimeZone>,
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
/// `c.now`.
pub fn rules_sql() -> String {
    RULES
        .replace("{floor}", &TXN_FLOOR_SECONDS.to_string())
        .replace(
            "{failed_floor}",
            &crate::pg::settings::failed_retention_seconds().to_string(),
        )
}

/// The work-list query with the due cap written in as a literal: a bound
/// parameter would make the planner guess its selectivity.
pub fn query(cap: i64) -> String {
    let rules = rules_sql();
    let due = |phase: u8, column: &str, cutoff: &str| {
        format!(
            "SELECT {phase} AS phase, r.queue_id, d.id, d.w FROM rules r
               CROSS JOIN LATERAL (
                   SELECT p.id, p.{column} AS w FROM queen.log_partitions p
                    WHERE p.queue_id = r.queue_id AND p.{column} IS NOT NULL AND p.{column} < {cutoff}
                    ORDER BY p.{column} LIMIT {cap}) d"
        )
    };
    format!(
        "WITH clock AS MATERIALIZED (SELECT now() AS now),
         rules AS MATERIALIZED (SELECT q.id AS queue_id, {rules} FROM queen.queues q CROSS JOIN clock c),
         p1 AS ({p1} ORDER BY w LIMIT {cap}),
         p2 AS ({p2} ORDER BY w LIMIT {cap}),
         p3 AS ({p3} ORDER BY w LIMIT {cap})
         SELECT 0, queue_id, NULL::int8, all_cutoff, completed_cutoff, txn_cutoff, max_wait_cutoff, NULL::int8, dlq_cutoff FROM rules
         UNION ALL SELECT phase, queue_id, id, NULL, NULL, NULL, NULL, (extract(epoch FROM w) * 1000000)::int8, NULL FROM p1
         UNION ALL SELECT phase, queue_id, id, NULL, NULL, NULL, NULL, (extract(epoch FROM w) * 1000000)::int8, NULL FROM p2
         UNION ALL SELECT phase, queue_id, id, NULL, NULL, NULL, NULL, (extract(epoch FROM w) * 1000000)::int8, NULL FROM p3
         UNION ALL SELECT 4, r.queue_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM rules r
          WHERE r.dlq_cutoff IS NOT NULL
            AND EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.queue_id = r.queue_id AND d.failed_at < r.dlq_cutoff)",
        p1 = due(1, "oldest_live_at", "GREATEST(r.all_cutoff, r.completed_cutoff)"),
        p2 = due(2, "oldest_txn_at", "r.txn_cutoff"),
        p3 = due(3, "oldest_live_at", "r.max_wait_cutoff"),
    )
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
        let phase: i32 = row.get(1).unwrap().unwrap();
        let queue: i64 = row.get(2).unwrap().unwrap();
        if phase == 4 {
            list.dlq_due.push(queue);
        } else if phase == 0 {
            list.rules.insert(
                queue,
                Rule {
                    all_cutoff: row.get(4).unwrap(),
                    completed_cutoff: row.get(5).unwrap(),
                    txn_cutoff: row.get(6).unwrap(),
                    max_wait_cutoff: row.get(7).unwrap(),
                    dlq_cutoff: row.get(9).unwrap(),
                },
            );
        } else {
            let pid: i64 = row.get(3).unwrap().unwrap();
            let us: i64 = row.get(8).unwrap().unwrap();
            due[(phase - 1) as usize].push((us, pid, queue));
        }
    }
    for (i, mut d) in due.into_iter().enumerate() {
        d.sort_unstable();
        list.phases[i] = d.into_iter().map(|(_, pid, q)| (pid, q)).collect();
    }
    list
}

/// The (partition, queue) the planner would visit in a phase, for tests and
/// explain: kept here so the readers use the same plan as the cycle.
pub fn due_in_phase(list: &WorkList, phase: usize) -> &[(i64, i64)] {
    &list.phases[phase - 1]
}
