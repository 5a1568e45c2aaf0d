//! Timers: schedule, cancel and list the ones set aside. The sweepers that
//! fire them are in `maintenance::sweeper`; their steps in `api::internal`.

use pgrx::prelude::*;
use serde_json::json;

use crate::pg::errors;
use crate::pg::spi;
use crate::reads;
use crate::timers;
use crate::wire::datum::{JsonOut, JsonbArg};

/// Schedules (or reschedules: the same upsert) a timer: a message with
/// `payload` delivered into queue/partition `delay_ms` from now, under
/// `transaction_id` (minted when NULL).
#[pg_extern]
fn timer_schedule(
    queue: &str,
    timer_key: &str,
    payload: Option<JsonbArg>,
    delay_ms: i64,
    partition: default!(Option<&str>, "NULL"),
    transaction_id: default!(Option<&str>, "NULL"),
) -> JsonOut {
    let payload = payload
        .map(|JsonbArg(t)| t)
        .unwrap_or_else(|| "null".into());
    JsonOut::of(&spi::spi(|c| {
        timers::schedule(
            c,
            queue,
            timer_key,
            payload.as_bytes(),
            delay_ms,
            partition,
            transaction_id,
            false,
        )
    }))
}

/// Timer operations in one transaction, Queen's timer body:
/// `{"operations": [{"op": "schedule" | "reschedule" | "cancel", "queue",
/// "timerKey", "payload" (base64 of one JSON document), "delayMs", "txn",
/// "partition", "payloadZstd"}]}`. Rows are taken in (queue, timerKey)
/// order; results come back in the request's order.
#[pg_extern]
fn timers(body: Option<JsonbArg>) -> JsonOut {
    let text = body
        .map(|JsonbArg(t)| t)
        .unwrap_or_else(|| errors::invalid("operations", "is required"));
    let body = crate::wire::json::parse_value("operations", &text);
    let ops = timers::parse_ops(&body);
    JsonOut::of(&spi::spi(|c| json!({"results": timers::apply(c, &ops)})))
}

/// Cancels a timer; `cancelled: false` when there was none (it may already
/// have fired: the log is the authority).
#[pg_extern]
fn timer_cancel(queue: &str, timer_key: &str) -> JsonOut {
    JsonOut::of(&spi::spi(
        |c| json!({"cancelled": timers::cancel(c, queue, timer_key)}),
    ))
}

/// Timers set aside after their last allowed fire failed, newest first (one
/// queue, or all): what they would have delivered, and why they could not.
#[pg_extern]
fn timers_set_aside(
    queue: default!(Option<&str>, "NULL"),
    max_rows: default!(i32, 100),
) -> JsonOut {
    if max_rows <= 0 {
        errors::invalid("max_rows", format!("{max_rows} must be at least 1"));
    }
    let rows = spi::spi(|c| timers::set_aside(c, queue, max_rows as i64));
    JsonOut::of(&json!({"timers": rows}))
}

/// One pending timer: `{"found": true, …, "payload"}` (base64 as stored),
/// or `{"found": false, "queue", "timerKey"}`.
#[pg_extern]
fn timer_peek(queue: &str, timer_key: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| reads::timers::peek(c, queue, timer_key)))
}

/// A page of a queue's pending timers by key in byte order after `after`
/// (exclusive): `rows` (no payloads), `truncated`, `nextAfter`. `max_rows`
/// NULL is 100; it is clamped to 1..`queen.read_page_max_rows`.
#[pg_extern]
fn timers_list(
    queue: &str,
    after: default!(Option<&str>, "NULL"),
    max_rows: default!(Option<i64>, "NULL"),
) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        reads::timers::list(c, queue, after, max_rows)
    }))
}
