//! The queues surface: configure, delete, list and read one queue (and
//! the deprecated names of the last three).

use pgrx::prelude::*;
use serde_json::json;

use super::optional;
use crate::catalog::admin;
use crate::maintenance::metrics::params::Params;
use crate::pg::errors;
use crate::pg::spi;
use crate::reads::queues as readers;
use crate::wire::datum::{JsonOut, JsonbArg};

/// The queues matching `options` (`queue`, `namespace`, `task`; absent or
/// empty: any), by name or (`order`: `newest`) newest first, a page of them
/// (`limit`, at most 1000; none: every queue, at most 100 000; `offset`):
/// each with its counts under the slowest cursor and over every cursor, its
/// dead letters and stored segments; `total` counting every match,
/// `pagination`, and the KV and timer rows stored.
///
/// Its symbol is new in 0.13.0 (a symbol keeps its arguments for ever).
#[pg_extern(name = "queues_list")]
fn queues_list_with_options(options: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = Params::parse_named("options", options.as_ref().map(|JsonbArg(t)| t.as_str()));
    JsonOut::of(&spi::spi(|c| readers::list(c, &p)))
}

/// `queues_list()` as a schema before 0.13.0 declares it (no arguments,
/// this symbol), until the database is updated: every queue by name.
#[pg_extern(sql = false)]
fn queues_list() -> JsonOut {
    queues_list_with_options(None)
}

/// Deprecated (0.12.0; removed in 0.14.0): `queues_list`.
#[pg_extern]
fn list_queues() -> JsonOut {
    queues_list_with_options(None)
}

/// Deprecated (0.12.0; removed in 0.14.0): `queue_get`.
#[pg_extern]
fn get_queue(queue: &str) -> JsonOut {
    queue_get(queue)
}

/// One queue: its options, its counts under the slowest cursor and over
/// every cursor, in total and per partition (by name, at most
/// `queen.resources_max_partitions`), its dead letters and stored segments;
/// 42704 for an unknown queue.
#[pg_extern]
fn queue_get(queue: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| readers::queue(c, queue)))
}

/// Creates or edits a queue; mode `merge` (default) or `replace`.
#[pg_extern]
fn configure(
    queue: Option<&str>,
    options: default!(Option<JsonbArg>, "'{}'"),
    mode: default!(Option<&str>, "'merge'"),
) -> JsonOut {
    let queue = queue.unwrap_or_else(|| errors::invalid("queue", "is required"));
    let options = optional("options", options);
    let mode = mode.unwrap_or("merge");
    JsonOut::of(&spi::spi(|client| {
        admin::configure(client, queue, &options, mode)
    }))
}

/// Deletes a queue with all its partitions, messages, cursors and dead
/// letters; 42704 for a missing queue.
#[pg_extern]
fn queue_delete(queue: Option<&str>) -> JsonOut {
    let queue = queue.unwrap_or_else(|| errors::invalid("queue", "is required"));
    JsonOut::of(&spi::spi(|client| admin::delete_queue(client, queue)))
}

/// Deprecated (0.12.0; removed in 0.14.0): `queue_delete`.
#[pg_extern]
fn delete_queue(queue: Option<&str>) -> JsonOut {
    queue_delete(queue)
}

/// Deprecated (0.12.0; removed in 0.14.0): `queue_delete`, whose 42704 for
/// a missing queue the front-end turns into Queen's answer. Deletes a queue
/// as `queue_delete` does, and answers a missing queue as Queen's server
/// does: `{"deleted": false, "queue", "existed": false, "message"}`.
#[pg_extern]
fn delete_queue_if_exists(queue: Option<&str>) -> JsonOut {
    let queue = queue.unwrap_or_else(|| errors::invalid("queue", "is required"));
    JsonOut::of(&spi::spi(|client| {
        admin::delete_queue_if_exists(client, queue).unwrap_or_else(|| {
            json!({"success": true, "deleted": false, "queue": queue, "existed": false,
                   "message": "Queue not found, nothing was deleted"})
        })
    }))
}
