//! Ephemeral queues (`crate::ephemeral`): their messages, cursors and
//! leases are in UNLOGGED tables and lost on a crash; their declarations
//! survive. One function per route of Queen's `/api/v1/ephemeral/*`.

use pgrx::prelude::*;

use super::{optional, required};
use crate::ephemeral::ops;
use crate::pg::spi;
use crate::wire::datum::{JsonOut, JsonbArg};

/// Declares an ephemeral queue: `options` is the closed list maxBytes,
/// maxLength, policy (reject | dropOldest), ttlSeconds, leaseSeconds,
/// retryLimit, windowBuffer {ms, count}. Answers `{"queue", "options",
/// "updatedAt", "tier", "effective", "durability"}`.
#[pg_extern]
fn ephemeral_configure(queue: &str, options: default!(Option<JsonbArg>, "NULL")) -> JsonOut {
    let options = optional("options", options);
    JsonOut::of(&spi::spi(|c| ops::configure(c, queue, &options)))
}

/// Drops every message, lease and cursor of an ephemeral queue; its
/// declaration stays. `{"queue", "dropped"}` (0 for an unknown queue).
#[pg_extern]
fn ephemeral_reset(queue: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| ops::reset(c, queue)))
}

/// Deletes an ephemeral queue, contents and declaration:
/// `{"queue", "deleted", "declared"}` (deleted false for an unknown queue).
#[pg_extern]
fn ephemeral_delete(queue: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| ops::delete(c, queue)))
}

/// `{"queue", "partition"?, "messages": [{"payload"}]}` → `{"pushed"}`;
/// a queue at its bounds with policy reject raises 53000 (queue_full).
#[pg_extern]
fn ephemeral_push(body: Option<JsonbArg>) -> JsonOut {
    let body = required("body", body);
    JsonOut::of(&spi::spi(|c| ops::push(c, &body)))
}

/// Up to `batch` (default 1) messages of an ephemeral queue for
/// `consumer_group` (NULL: queue mode): `{"queue", "messages": [{"id",
/// "partition", "attempts", "payload"}]}`, an empty list when there is none.
#[pg_extern]
fn ephemeral_pop(
    queue: &str,
    partition: default!(Option<&str>, "NULL"),
    consumer_group: default!(Option<&str>, "NULL"),
    batch: default!(Option<i64>, "NULL"),
    auto_ack: default!(bool, false),
) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        ops::pop(c, queue, partition, consumer_group, batch, auto_ack)
    }))
}

/// `{"queue", "group"?, "acks": [{"id", "status"?}]}` → `{"results": [{"id",
/// "outcome": acked | redelivered | stale | unknown}]}`.
#[pg_extern]
fn ephemeral_ack(body: Option<JsonbArg>) -> JsonOut {
    let body = required("body", body);
    JsonOut::of(&spi::spi(|c| ops::ack(c, &body)))
}

/// Every ephemeral queue, declared or live, with its gauges.
#[pg_extern]
fn ephemeral_queues() -> JsonOut {
    JsonOut::of(&spi::spi(ops::queues))
}

/// One ephemeral queue's gauges (per partition and group); 42704 when it
/// is neither declared nor live.
#[pg_extern]
fn ephemeral_depth(queue: &str, consumer_group: default!(Option<&str>, "NULL")) -> JsonOut {
    JsonOut::of(&spi::spi(|c| ops::depth(c, queue, consumer_group)))
}
