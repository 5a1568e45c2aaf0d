//! Queen's own views of queues: the list (`queues_list`) and one queue
//! (`queue_get`), each with its counts under two readings of its cursors,
//! which the front-end turns into Queen's resource and status answers.
//!
//! A partition's (and, added up, a queue's) `messages` are the retained
//! offsets, last offset − log start + 1; `failed` its dead letters.
//! `slowestCursor` reads the slowest reader: the slowest named group's
//! cursor, the queue-mode cursor only where no named group has one (none:
//! nothing committed). Its `pending` = last offset − max(committed, log
//! start − 1), `processing` = the open span of every group's live leases (at
//! most pending), `completed` = messages − pending − failed (never below 0).
//! `allCursors` adds up every cursor: what each has not consumed and is not
//! leased (`pending`), what its live lease holds (`processing`), what it
//! consumed that is still retained (`completed`); with no cursor every
//! message is pending.

use pgrx::spi::{SpiClient, SpiHeapTupleData};
use serde_json::{json, Value};

use super::resources::completed;
use super::series::Filters;
use super::status::MAX_QUEUES;
use crate::catalog::queues::{self, default_tenant};
use crate::maintenance::metrics::params::{Params, MAX_LIMIT};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec, exec_custom};
use crate::pg::time::{micros_to_iso, micros_to_iso_or_null as iso};
use crate::query;
use crate::wire::json::check_name;
use crate::wire::QUEUE_MODE;

/// Counts under one reading of the cursors.
struct Reading {
    pending: i64,
    processing: i64,
    completed: i64,
}

impl Reading {
    /// `{"pending", "processing", "completed"}`.
    fn json(&self) -> Value {
        json!({"pending": self.pending, "processing": self.processing,
               "completed": self.completed})
    }
}

/// A row's retained messages, dead letters and both readings (a row of
/// `queues_list` or of `queues_partitions`).
struct Counts {
    messages: i64,
    failed: i64,
    slowest: Reading,
    all: Reading,
}

impl Counts {
    /// The counts of row `r`.
    fn of(r: &SpiHeapTupleData<'_>) -> Counts {
        let messages: i64 = spi::col(r, "total");
        let failed: i64 = spi::col(r, "dead_letter");
        let pending: i64 = spi::col(r, "slowest_pending");
        Counts {
            messages,
            failed,
            slowest: Reading {
                pending,
                processing: spi::col(r, "slowest_processing"),
                completed: completed(messages, pending, failed),
            },
            all: Reading {
                pending: spi::col(r, "all_pending"),
                processing: spi::col(r, "all_processing"),
                completed: spi::col(r, "all_completed"),
            },
        }
    }

    /// Puts `messages`, `failed`, `slowestCursor` and `allCursors` into the
    /// object `into`.
    fn put(&self, into: &mut Value) {
        into["messages"] = json!(self.messages);
        into["failed"] = json!(self.failed);
        into["slowestCursor"] = self.slowest.json();
        into["allCursors"] = self.all.json();
    }
}

/// One row of `queues_list`.
struct Listed {
    id: i64,
    name: String,
    namespace: Option<String>,
    task: Option<String>,
    created_us: i64,
    partitions: i64,
    pruned_failed: i64,
    counts: Counts,
    segments: i64,
    frames: i64,
    bytes: i64,
}

impl Listed {
    /// The queue of row `r`.
    fn of(r: SpiHeapTupleData<'_>) -> Listed {
        Listed {
            id: spi::col(&r, "id"),
            name: spi::col(&r, "name"),
            namespace: spi::opt(&r, "namespace"),
            task: spi::opt(&r, "task"),
            created_us: spi::col(&r, "created_us"),
            partitions: spi::col(&r, "partitions"),
            pruned_failed: spi::col(&r, "pruned_failed"),
            counts: Counts::of(&r),
            segments: spi::col(&r, "segments"),
            frames: spi::col(&r, "frames"),
            bytes: spi::col(&r, "bytes"),
        }
    }

    /// What the list and the one queue both answer of it: `id`, `name`,
    /// `namespace`, `task`, `createdAt`, `pruned_failed`, `retainedBytes`
    /// and `segments: {segments, messages}`.
    fn identity(&self) -> Value {
        json!({
            "id": self.id.to_string(),
            "name": self.name,
            "namespace": self.namespace,
            "task": self.task,
            "createdAt": micros_to_iso(self.created_us),
            "pruned_failed": self.pruned_failed,
            "retainedBytes": self.bytes,
            "segments": {"segments": self.segments, "messages": self.frames},
        })
    }

    /// The queue as the list answers it: its identity, `partitions` (how
    /// many) and its counts.
    fn json(&self) -> Value {
        let mut v = self.identity();
        v["partitions"] = json!(self.partitions);
        self.counts.put(&mut v);
        v
    }
}

/// What a listing asks: the filters, the order and the page.
struct Asked {
    filters: Filters,
    by_name: bool,
    limit: Option<i64>,
    offset: i64,
}

impl Asked {
    /// Read from the options: `queue`, `namespace`, `task` (absent or
    /// empty: any), `limit` (at most [`MAX_LIMIT`]), `offset`, `order`
    /// (`name`, the default, or `newest`).
    fn of(p: &Params) -> Asked {
        let filters = Filters::of(p);
        let limit = p.count("limit").map(|l| l.min(MAX_LIMIT));
        let offset = p.count("offset").unwrap_or(0);
        let by_name = match p.text("order").as_deref() {
            None | Some("name") => true,
            Some("newest") => false,
            Some(o) => errors::invalid("order", format!("{o:?} is not one of name, newest")),
        };
        Asked {
            filters,
            by_name,
            limit,
            offset,
        }
    }

    /// The one queue named `name`.
    fn one(name: &str) -> Asked {
        Asked {
            filters: Filters {
                queue: Some(name.to_owned()),
                namespace: None,
                task: None,
            },
            by_name: true,
            limit: Some(1),
            offset: 0,
        }
    }
}

/// The queues `a` asks for, in its order and page; without a limit at
/// most [`MAX_QUEUES`]. Planned for the filters given.
fn listed(c: &mut SpiClient<'_>, a: &Asked) -> Vec<Listed> {
    let f = &a.filters;
    exec_custom(
        c,
        query!("queues_list"),
        &[
            spi::UUID,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::BOOL,
            spi::INT8,
            spi::INT8,
            spi::TEXT,
        ],
        &[
            default_tenant().into(),
            f.queue.as_deref().into(),
            f.namespace.as_deref().into(),
            f.task.as_deref().into(),
            a.by_name.into(),
            a.limit.unwrap_or(MAX_QUEUES).into(),
            a.offset.into(),
            QUEUE_MODE.into(),
        ],
    )
    .map(Listed::of)
    .collect()
}

/// How many queues match the filters of `a`, whatever its page.
fn matched(c: &mut SpiClient<'_>, a: &Asked) -> i64 {
    let f = &a.filters;
    exec_custom(
        c,
        query!("queues_matched"),
        &[spi::UUID, spi::TEXT, spi::TEXT, spi::TEXT],
        &[
            default_tenant().into(),
            f.queue.as_deref().into(),
            f.namespace.as_deref().into(),
            f.task.as_deref().into(),
        ],
    )
    .next()
    .map_or(0, |r| spi::col(&r, "matched"))
}

/// The queues matching the options `p` (`queue`, `namespace`, `task`), by
/// name or newest first (`order`), one page of them (`limit`, at most
/// [`MAX_LIMIT`]; none: every queue, at most [`MAX_QUEUES`]; `offset`):
/// `{"queues": [{"id", "name", "namespace", "task", "createdAt",
/// "partitions", "messages", "failed", "pruned_failed", "retainedBytes",
/// "segments": {"segments", "messages"}, "slowestCursor", "allCursors"}],
/// "total", "pagination": {"limit", "offset"}}`, `total` counting every
/// match; and the KV and timer rows stored with their bytes (`kvRows`,
/// `kvBytes`, `timerRows`, `timerBytes`).
pub fn list(c: &mut SpiClient<'_>, p: &Params) -> Value {
    let a = Asked::of(p);
    let total = matched(c, &a);
    let queues: Vec<Value> = listed(c, &a).iter().map(Listed::json).collect();
    let r = exec(c, query!("resources_kv_timer_totals"), &[], &[])
        .next()
        .expect("one row");
    json!({
        "queues": queues,
        "total": total,
        "pagination": {"limit": a.limit, "offset": a.offset},
        "kvRows": spi::col::<i64>(&r, "kv_rows"),
        "kvBytes": spi::col::<i64>(&r, "kv_bytes"),
        "timerRows": spi::col::<i64>(&r, "timer_rows"),
        "timerBytes": spi::col::<i64>(&r, "timer_bytes"),
    })
}

/// One queue: what its row of the list answers (`id`, `name`,
/// `namespace`, `task`, `createdAt`, `pruned_failed`, `retainedBytes`,
/// `segments`), its `options`, its `totals` over every partition
/// (`partitions`, `messages`, `failed`, `slowestCursor`, `allCursors`) and
/// its `partitions` by name (at most `queen.resources_max_partitions`). An
/// unknown queue is 42704.
pub fn queue(c: &mut SpiClient<'_>, name: &str) -> Value {
    let q = queues::find(c, check_name("queue", name))
        .unwrap_or_else(|| errors::undefined("queue", name));
    let row = listed(c, &Asked::one(&q.name))
        .into_iter()
        .next()
        .unwrap_or_else(|| errors::undefined("queue", name));
    let mut totals = json!({"partitions": row.partitions});
    row.counts.put(&mut totals);
    let mut v = row.identity();
    v["options"] = queues::answered_options(c, &q);
    v["partitions"] = Value::Array(partitions(c, q.id));
    v["totals"] = totals;
    v
}

/// A queue's partitions by name, at most `queen.resources_max_partitions`:
/// `id`, `name`, `createdAt`, `lastOffset`, `logStart`, `lastWriteAt`,
/// `oldestMessage`, `newestMessage` (null while it holds nothing),
/// `consumed` (the furthest cursor's committed offset + 1; 0 without a
/// cursor) and its counts.
fn partitions(c: &mut SpiClient<'_>, queue_id: i64) -> Vec<Value> {
    exec(
        c,
        query!("queues_partitions"),
        &[spi::INT8, spi::INT8, spi::TEXT],
        &[
            queue_id.into(),
            settings::resources_max_partitions().into(),
            QUEUE_MODE.into(),
        ],
    )
    .map(|r| {
        let counts = Counts::of(&r);
        let last_write_us: i64 = spi::col(&r, "last_write_us");
        let mut v = json!({
            "id": spi::col::<i64>(&r, "id").to_string(),
            "name": spi::col::<String>(&r, "name"),
            "createdAt": micros_to_iso(spi::col(&r, "created_us")),
            "lastOffset": spi::col::<i64>(&r, "last_offset"),
            "logStart": spi::col::<i64>(&r, "log_start"),
            "lastWriteAt": micros_to_iso(last_write_us),
            "oldestMessage": iso(spi::opt(&r, "oldest_us")),
            "newestMessage": (counts.messages > 0).then(|| micros_to_iso(last_write_us)),
            "consumed": spi::col::<i64>(&r, "consumed"),
        });
        counts.put(&mut v);
        v
    })
    .collect()
}
