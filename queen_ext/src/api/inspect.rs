//! The messages and traces surface: a consumer's trace of a message, the
//! trace readers, the message listing, one message by its address, and the
//! deletion of a message (live or dead-lettered). Answers are shaped as
//! Queen's server shapes them (the trace readers in its snake_case keys).

use crate::wire::datum::ArgValue;
use pgrx::prelude::*;
use serde_json::{json, Value};

use crate::engine::erase;
use crate::engine::traces::{self, TraceIn};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi;
use crate::pg::time::wall_clock_us;
use crate::reads::messages::{self, ListCursor, ListFilter, STATUSES};
use crate::wire::datum::{JsonOut, JsonbArg};
use crate::wire::json::Obj;

/// The page of a by-name trace read that names none, as Queen's server pages.
const TRACES_BY_NAME_LIMIT: i64 = 100;
/// The page of a trace-name read that names none, as Queen's server pages.
const TRACE_NAMES_LIMIT: i64 = 50;
/// The page of a message listing that names none, as Queen's server pages.
const MESSAGES_LIMIT: i64 = 200;
/// How far back a message listing without `from` reaches, as Queen's
/// server reads it: an hour.
const MESSAGES_WINDOW_US: i64 = 3_600_000_000;

/// A page's limit: `default` when absent, else 1 to `max` (its setting).
fn page_limit(field: &str, n: Option<i64>, default: i64, max: i64, setting: &str) -> i64 {
    let n = n.unwrap_or(default.min(max));
    if n <= 0 || n > max {
        errors::invalid(field, format!("{n} is not between 1 and {setting} ({max})"));
    }
    n
}

fn page_offset(field: &str, n: Option<i64>) -> i64 {
    let n = n.unwrap_or(0);
    if n < 0 {
        errors::invalid(field, format!("{n} must not be negative"));
    }
    n
}

/// Records what a consumer traced about a message (the body
/// `message.trace()` sends). `{"success": true, "traceId"}`.
#[pg_extern]
fn trace_record(body: Option<JsonbArg>) -> JsonOut {
    let body = crate::api::required("body", body);
    let t = TraceIn::parse(&body);
    JsonOut::of(&spi::spi(
        |c| json!({"success": true, "traceId": traces::record(c, &t)}),
    ))
}

/// The traces of one message, oldest first (at most
/// `queen.traces_max_page`): `{"traces": [...]}`, empty when there are none.
#[pg_extern]
fn traces_for_message(partition_id: i64, transaction_id: &str) -> JsonOut {
    let limit = settings::traces_max_page();
    spi::spi(|c| {
        let rows = traces::for_message(c, partition_id, transaction_id, limit);
        JsonOut::of(&json!({ "traces": rows }))
    })
}

/// One page of the traces filed under `name`, oldest first: `{"traces",
/// "total", "pagination": {"limit", "offset"}}`.
#[pg_extern]
fn traces_by_name(
    name: &str,
    row_limit: default!(Option<i32>, "NULL"),
    row_offset: default!(Option<i32>, "NULL"),
) -> JsonOut {
    crate::wire::json::check_name("name", name);
    let limit = page_limit(
        "row_limit",
        row_limit.map(i64::from),
        TRACES_BY_NAME_LIMIT,
        settings::traces_max_page(),
        "queen.traces_max_page",
    );
    let offset = page_offset("row_offset", row_offset.map(i64::from));
    spi::spi(|c| {
        let (rows, total) = traces::by_name(c, name, limit, offset);
        JsonOut::of(&json!({
            "traces": rows,
            "total": total,
            "pagination": {"limit": limit, "offset": offset},
        }))
    })
}

/// One page of the trace names, most recently used first: `{"trace_names",
/// "total", "pagination": {"limit", "offset"}}`.
#[pg_extern]
fn trace_names(
    row_limit: default!(Option<i32>, "NULL"),
    row_offset: default!(Option<i32>, "NULL"),
) -> JsonOut {
    let limit = page_limit(
        "row_limit",
        row_limit.map(i64::from),
        TRACE_NAMES_LIMIT,
        settings::traces_max_page(),
        "queen.traces_max_page",
    );
    let offset = page_offset("row_offset", row_offset.map(i64::from));
    spi::spi(|c| {
        let (rows, total) = traces::names(c, limit, offset);
        JsonOut::of(&json!({
            "trace_names": rows,
            "total": total,
            "pagination": {"limit": limit, "offset": offset},
        }))
    })
}

/// A timestamp filter as microseconds since the Unix epoch, read as ISO
/// 8601 in Rust (22023 naming the field otherwise).
fn micros(o: &Obj<'_>, key: &str) -> Option<i64> {
    o.opt_str(key)
        .map(|t| crate::pg::time::filter_us(&o.field(key), t))
}

/// The messages written within a window, newest first, each with its status
/// over the consumer groups. Filters: queue, partition, namespace (or ns),
/// task, status (pending, processing, completed, dead_letter), from and to
/// (ISO timestamps, inclusive; default the last hour), limit (default 200,
/// at most `queen.messages_max_page`), offset. `{"messages", "mode",
/// "total"}`.
#[pg_extern]
fn messages_list(filters: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let filters: Value = filters.map(|a| a.value("filters")).unwrap_or(json!({}));
    let o = Obj::new(&filters, "filters");
    let status = o.opt_str("status");
    if let Some(s) = status {
        if !STATUSES.contains(&s) {
            errors::invalid(
                &o.field("status"),
                format!("{s:?} is not one of {}", STATUSES.join(", ")),
            );
        }
    }
    let limit = page_limit(
        &o.field("limit"),
        o.opt_i64("limit"),
        MESSAGES_LIMIT,
        settings::messages_max_page(),
        "queen.messages_max_page",
    );
    let offset = page_offset(&o.field("offset"), o.opt_i64("offset"));
    let scan_max = settings::messages_scan_max();
    if offset > scan_max - limit {
        errors::invalid(
            &o.field("offset"),
            format!(
                "offset {offset} plus limit {limit} is more than \
                 queen.messages_scan_max ({scan_max})"
            ),
        );
    }
    // The wall clock: segments are stamped with it as they are written.
    let now = wall_clock_us();
    let to_us = micros(&o, "to").unwrap_or(now);
    let from_us = micros(&o, "from").unwrap_or(to_us - MESSAGES_WINDOW_US);
    let cursor = o
        .opt_str("cursor")
        .filter(|t| !t.is_empty())
        .map(|t| ListCursor::parse(&o.field("cursor"), t));
    if cursor.is_some_and(|c| c.skip > scan_max - limit) {
        errors::invalid(&o.field("cursor"), "is not a cursor a listing answered");
    }
    if cursor.is_some() && offset > 0 {
        errors::invalid(
            &o.field("offset"),
            "goes with no cursor: the cursor says where the page starts",
        );
    }
    let f = ListFilter {
        queue: o.opt_name("queue"),
        partition: o.opt_name("partition"),
        namespace: o.opt_name("namespace").or(o.opt_name("ns")),
        task: o.opt_name("task"),
        status,
        from_us,
        to_us,
        limit,
        offset,
        cursor,
    };
    JsonOut::of(&spi::spi(|c| messages::list(c, &f)))
}

/// One message by its address, live or dead-lettered, with its status over
/// the consumer groups; 42704 when there is none (or it was deleted).
#[pg_extern]
fn message_get(partition_id: i64, transaction_id: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        messages::get(c, partition_id, transaction_id)
    }))
}

/// Deletes a message: no consumer group is handed it again (its segment
/// is not rewritten), and its dead letters go. `{"success": true,
/// "partitionId", "transactionId", "message", "deletedOffsets",
/// "deadLettersDeleted"}`; 42704 when there is nothing to delete.
#[pg_extern]
fn message_delete(partition_id: i64, transaction_id: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        erase::delete(c, partition_id, transaction_id)
    }))
}
