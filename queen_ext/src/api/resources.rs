//! The resource views, as Queen's server answers them: queues with their
//! counts, one queue, namespaces, tasks, a queue's depth, the partitions
//! holding the most backlog. Every count is computed when asked.

use pgrx::prelude::*;

use crate::pg::spi;
use crate::reads::resources::{self, Grouping};
use crate::wire::datum::JsonOut;

/// Deprecated (0.13.0; removed in 0.14.0): `queues_list`, whose answer the front-end turns into Queen's.
/// Every queue, newest first, with `id`, `partitions`, `retainedBytes`,
/// `messages: {total, pending, processing}`, `segments`; and the KV and
/// timer rows stored.
#[pg_extern]
fn resource_queues() -> JsonOut {
    JsonOut::of(&spi::spi(resources::list))
}

/// Deprecated (0.13.0; removed in 0.14.0): `queue_get`, whose answer the front-end turns into Queen's.
/// One queue with its options, its partitions' stats and its totals.
#[pg_extern]
fn resource_queue(queue: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| resources::queue(c, queue)))
}

/// The namespaces queues carry, with their queues, partitions and messages.
#[pg_extern]
fn resource_namespaces() -> JsonOut {
    JsonOut::of(&spi::spi(|c| resources::grouped(c, Grouping::Namespace)))
}

/// The tasks queues carry, with their queues, partitions and messages.
#[pg_extern]
fn resource_tasks() -> JsonOut {
    JsonOut::of(&spi::spi(|c| resources::grouped(c, Grouping::Task)))
}

/// A queue's pending, processing and ready offsets, in total and per
/// partition: under `consumer_group`'s cursor, or (NULL) the worst one.
#[pg_extern]
fn queue_depth(queue: &str, consumer_group: default!(Option<&str>, "NULL")) -> JsonOut {
    JsonOut::of(&spi::spi(|c| resources::depth(c, queue, consumer_group)))
}

/// The partitions (of `queue`, or NULL: of every queue) holding the most
/// pending, at most `max_rows` (NULL: 100; clamped to
/// `queen.read_page_max_rows`), with `pending`, `processing` and
/// `lagSeconds`.
#[pg_extern]
fn partition_backlog(
    queue: default!(Option<&str>, "NULL"),
    max_rows: default!(Option<i64>, "NULL"),
) -> JsonOut {
    JsonOut::of(&spi::spi(|c| resources::backlog(c, queue, max_rows)))
}

/// Who may call what: each of queen's group roles and `pg_monitor` with the
/// functions it may call, as granted now, and the deprecated names.
#[pg_extern]
fn rights() -> JsonOut {
    JsonOut::of(&spi::spi(resources::rights))
}
