//! The resource views of queues: the list and one queue with counts,
//! namespaces and tasks, a queue's depth for a group, and the partitions
//! holding the most backlog; and who may call what. Every count is computed when asked, from the
//! partitions' watermarks and the consumers' cursors (no cache): retained =
//! last offset − log start + 1, pending = last offset − max(committed, log
//! start − 1), processing = the open span of live leases.

use std::collections::BTreeMap;

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::queues::{self, default_tenant};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::pg::time::{micros_to_iso, micros_to_iso_or_null as iso};
use crate::query;
use crate::wire::json::check_name;
use crate::wire::QUEUE_MODE;

/// The partitions one backlog listing answers when no limit is given.
pub const DEFAULT_BACKLOG_ROWS: i64 = 100;

/// One row of `resources_queue_stats`.
struct QueueStats {
    id: i64,
    name: String,
    namespace: Option<String>,
    task: Option<String>,
    created_us: i64,
    partitions: i64,
    total: i64,
    pending: i64,
    processing: i64,
    dead_letter: i64,
    segments: i64,
    frames: i64,
    bytes: i64,
}

fn queue_stats(c: &mut SpiClient<'_>, queue_id: Option<i64>, max_rows: i64) -> Vec<QueueStats> {
    exec(
        c,
        query!("resources_queue_stats"),
        &[spi::INT8, spi::TEXT, spi::UUID, spi::INT8],
        &[
            queue_id.into(),
            QUEUE_MODE.into(),
            default_tenant().into(),
            max_rows.into(),
        ],
    )
    .map(|r| QueueStats {
        id: spi::col(&r, "id"),
        name: spi::col(&r, "name"),
        namespace: spi::opt(&r, "namespace"),
        task: spi::opt(&r, "task"),
        created_us: spi::col(&r, "created_us"),
        partitions: spi::col(&r, "partitions"),
        total: spi::col(&r, "total"),
        pending: spi::col(&r, "pending"),
        processing: spi::col(&r, "processing"),
        dead_letter: spi::col(&r, "dead_letter"),
        segments: spi::col(&r, "segments"),
        frames: spi::col(&r, "frames"),
        bytes: spi::col(&r, "bytes"),
    })
    .collect()
}

/// Done offsets: retained, neither pending nor dead (never below 0).
pub(super) fn completed(total: i64, pending: i64, dead_letter: i64) -> i64 {
    (total - pending - dead_letter).max(0)
}

/// Every queue, newest first, as Queen's server lists them: `id`, `name`,
/// `namespace`, `task`, `createdAt`, `partitions`, `retainedBytes`,
/// `messages: {total, pending, processing}`, `segments: {segments,
/// messages}`; and the KV and timer rows stored (`kvRows`, `kvBytes`,
/// `timerRows`, `timerBytes`).
pub fn list(c: &mut SpiClient<'_>) -> Value {
    let queues: Vec<Value> = queue_stats(c, None, i64::MAX)
        .into_iter()
        .map(|q| {
            json!({
                "id": q.id.to_string(),
                "name": q.name,
                "namespace": q.namespace,
                "task": q.task,
                "createdAt": micros_to_iso(q.created_us),
                "partitions": q.partitions,
                "retainedBytes": q.bytes,
                "messages": {"total": q.total, "pending": q.pending, "processing": q.processing},
                "segments": {"segments": q.segments, "messages": q.frames},
            })
        })
        .collect();
    let r = exec(c, query!("resources_kv_timer_totals"), &[], &[])
        .next()
        .expect("one row");
    json!({
        "queues": queues,
        "kvRows": spi::col::<i64>(&r, "kv_rows"),
        "kvBytes": spi::col::<i64>(&r, "kv_bytes"),
        "timerRows": spi::col::<i64>(&r, "timer_rows"),
        "timerBytes": spi::col::<i64>(&r, "timer_bytes"),
    })
}

/// One partition's counts, by name (of one queue, or of all).
struct PartitionStats {
    id: i64,
    name: String,
    last_offset: i64,
    log_start: i64,
    created_us: i64,
    oldest_us: Option<i64>,
    newest_us: Option<i64>,
    total: i64,
    pending: i64,
    processing: i64,
    dead_letter: i64,
}

fn partition_stats(
    c: &mut SpiClient<'_>,
    queue_id: i64,
    group: Option<&str>,
    max_rows: i64,
) -> Vec<PartitionStats> {
    exec(
        c,
        query!("resources_partition_stats"),
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::INT8],
        &[
            queue_id.into(),
            QUEUE_MODE.into(),
            group.into(),
            max_rows.into(),
        ],
    )
    .map(|r| PartitionStats {
        id: spi::col(&r, "id"),
        name: spi::col(&r, "name"),
        last_offset: spi::col(&r, "last_offset"),
        log_start: spi::col(&r, "log_start"),
        created_us: spi::col(&r, "created_us"),
        oldest_us: spi::opt(&r, "oldest_us"),
        newest_us: spi::opt(&r, "newest_us"),
        total: spi::col(&r, "total"),
        pending: spi::col(&r, "pending"),
        processing: spi::col(&r, "processing"),
        dead_letter: spi::col(&r, "dead_letter"),
    })
    .collect()
}

fn find_queue(c: &mut SpiClient<'_>, queue: &str) -> queues::QueueRow {
    queues::find(c, check_name("queue", queue)).unwrap_or_else(|| errors::undefined("queue", queue))
}

/// One queue as Queen's server answers it: `id`, `name`, `namespace`,
/// `task`, `createdAt`, `options`, `partitions` (by name, at most
/// `queen.resources_max_partitions`, each with `stats`, `oldestMessage`,
/// `newestMessage`), `totals`, `retainedBytes`, `segments`. An unknown
/// queue is 42704.
pub fn queue(c: &mut SpiClient<'_>, name: &str) -> Value {
    let q = find_queue(c, name);
    let s = queue_stats(c, Some(q.id), 1)
        .into_iter()
        .next()
        .unwrap_or_else(|| errors::undefined("queue", name));
    let parts: Vec<Value> = partition_stats(c, q.id, None, settings::resources_max_partitions())
        .into_iter()
        .map(|p| {
            json!({
                "id": p.id.to_string(),
                "name": p.name,
                "createdAt": micros_to_iso(p.created_us),
                "stats": {
                    "total": p.total,
                    "pending": p.pending,
                    "processing": p.processing,
                    "completed": completed(p.total, p.pending, p.dead_letter),
                    "failed": Value::Null,
                    "deadLetter": p.dead_letter,
                },
                "lastOffset": p.last_offset,
                "logStart": p.log_start,
                "oldestMessage": iso(p.oldest_us),
                "newestMessage": iso(p.newest_us),
            })
        })
        .collect();
    let options = queues::answered_options(c, &q);
    json!({
        "id": s.id.to_string(),
        "name": s.name,
        "namespace": s.namespace,
        "task": s.task,
        "createdAt": micros_to_iso(s.created_us),
        "options": options,
        "partitions": parts,
        "totals": {
            "partitions": s.partitions,
            "total": s.total,
            "pending": s.pending,
            "processing": s.processing,
            "completed": completed(s.total, s.pending, s.dead_letter),
            "failed": Value::Null,
            "deadLetter": s.dead_letter,
        },
        "retainedBytes": s.bytes,
        "segments": {"segments": s.segments, "messages": s.frames},
    })
}

/// Which column of a queue groups it: its namespace or its task.
#[derive(Clone, Copy)]
pub enum Grouping {
    Namespace,
    Task,
}

/// The namespaces (or tasks) carried by queues, by name, as Queen's server
/// answers them: `{"namespaces": [{"namespace", "queues", "partitions",
/// "messages": {"total", "pending"}}]}` (or `tasks` / `task`); `pending`
/// here leaves out what is leased. Queues without one are left out.
pub fn grouped(c: &mut SpiClient<'_>, by: Grouping) -> Value {
    let (list_key, key) = match by {
        Grouping::Namespace => ("namespaces", "namespace"),
        Grouping::Task => ("tasks", "task"),
    };
    let mut groups: BTreeMap<String, [i64; 4]> = BTreeMap::new();
    for q in queue_stats(c, None, i64::MAX) {
        let name = match by {
            Grouping::Namespace => q.namespace,
            Grouping::Task => q.task,
        };
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            continue;
        };
        let g = groups.entry(name).or_default();
        g[0] += 1;
        g[1] += q.partitions;
        g[2] += q.total;
        g[3] += (q.pending - q.processing).max(0);
    }
    let rows: Vec<Value> = groups
        .into_iter()
        .map(|(name, [queues, partitions, total, pending])| {
            json!({key: name, "queues": queues, "partitions": partitions,
                   "messages": {"total": total, "pending": pending}})
        })
        .collect();
    json!({ list_key: rows })
}

/// A queue's depth as Queen's server answers it: under the worst cursor
/// (`group` None) or one group's (no cursor yet: nothing committed),
/// `pending`, `processing`, `ready` (pending, not leased), the partitions
/// with some of each, and per partition the same three. For a group that
/// conflates, `conflation` is true and the effective counts are what its
/// pops would deliver: one message per partition with some pending.
pub fn depth(c: &mut SpiClient<'_>, name: &str, group: Option<&str>) -> Value {
    let q = find_queue(c, name);
    let group = group.map(|g| check_name("group", g));
    let (mut pending, mut processing, mut pp, mut pr) = (0i64, 0i64, 0i64, 0i64);
    let parts: Vec<Value> = partition_stats(c, q.id, group, i64::MAX)
        .into_iter()
        .map(|p| {
            let ready = p.pending - p.processing;
            pending += p.pending;
            processing += p.processing;
            pp += (p.pending > 0) as i64;
            pr += (ready > 0) as i64;
            json!({"partition": p.name, "pending": p.pending, "processing": p.processing,
                   "ready": ready})
        })
        .collect();
    let conflation = group.is_some_and(|g| {
        exec(
            c,
            query!("group_conflation"),
            &[spi::INT8, spi::TEXT],
            &[q.id.into(), g.into()],
        )
        .next()
        .is_some_and(|r| spi::col::<bool>(&r, "conflation"))
    });
    let (effective_pending, effective_ready) = match conflation {
        true => (pp, pr),
        false => (pending, pending - processing),
    };
    json!({
        "queue": q.name,
        "group": group,
        "pending": pending,
        "processing": processing,
        "ready": pending - processing,
        "partitionsPending": pp,
        "partitionsReady": pr,
        "conflation": conflation,
        "effectivePending": effective_pending,
        "effectiveReady": effective_ready,
        "partitions": parts,
    })
}

/// The partitions (of `queue`, or of every queue) holding the most pending
/// under their slowest reader, at most `limit` (default
/// [`DEFAULT_BACKLOG_ROWS`], clamped to 1..`queen.read_page_max_rows`):
/// `queue`, `partition`, `partitionId`, `pending`, `processing`,
/// `lagSeconds` (age of the oldest unread message; null when caught up).
pub fn backlog(c: &mut SpiClient<'_>, queue: Option<&str>, limit: Option<i64>) -> Value {
    let queue = queue.map(|q| check_name("queue", q));
    let limit = limit
        .unwrap_or(DEFAULT_BACKLOG_ROWS)
        .clamp(1, settings::read_page_max_rows());
    let now_us = crate::pg::time::statement_start_us();
    let rows: Vec<Value> = exec(
        c,
        query!("resources_partition_backlog"),
        &[spi::TEXT, spi::TEXT, spi::INT8, spi::UUID],
        &[
            queue.into(),
            QUEUE_MODE.into(),
            limit.into(),
            default_tenant().into(),
        ],
    )
    .map(|r| {
        let lag = spi::opt::<i64>(&r, "oldest_us").map(|us| ((now_us - us).max(0)) / 1_000_000);
        json!({
            "queue": spi::col::<String>(&r, "queue"),
            "partition": spi::col::<String>(&r, "name"),
            "partitionId": spi::col::<i64>(&r, "id").to_string(),
            "pending": spi::col::<i64>(&r, "pending"),
            "processing": spi::col::<i64>(&r, "processing"),
            "lagSeconds": lag,
        })
    })
    .collect();
    json!({"partitions": rows, "limit": limit})
}

/// Who may call what, as the database grants it: each of queen's group
/// roles (and `pg_monitor`) with the functions of schema `queen` it may
/// call, and the deprecated names with what to call instead.
pub fn rights(c: &mut SpiClient<'_>) -> Value {
    let roles: Vec<String> = queen_datum::rights::ROLES
        .iter()
        .map(|(role, _)| (*role).to_owned())
        .collect();
    let granted: Vec<Value> = exec(
        c,
        queen_datum::rights::GRANTED,
        &[spi::TEXT_ARRAY],
        &[roles.into()],
    )
    .map(|r| {
        json!({"role": spi::col::<String>(&r, "role"),
               "functions": spi::col::<Vec<String>>(&r, "functions")})
    })
    .collect();
    let deprecated: Vec<Value> = exec(c, queen_datum::rights::DEPRECATED_NOW, &[], &[])
        .map(|r| json!({"name": spi::col::<String>(&r, "name"), "note": spi::col::<String>(&r, "note")}))
        .collect();
    json!({"roles": granted, "deprecated": deprecated})
}
