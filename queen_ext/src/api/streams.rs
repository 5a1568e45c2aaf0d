//! Streaming queries: registration, state reads and cycles, with the bodies
//! and answers of the queen-mq streaming SDK (`streams`), and the
//! administrator's listing and deletion of queries.

use pgrx::prelude::*;

use super::required;
use crate::pg::errors;
use crate::pg::spi;
use crate::streams::{self, cycle, wire};
use crate::wire::datum::{JsonOut, JsonbArg};

/// Registers a streaming query by name (`{name, source_queue, config_hash,
/// sink_queue, reset}`), or finds it: `{success, query_id, name,
/// config_hash, fresh, reset}`; a changed `config_hash` without `reset`
/// answers `success` false with `conflict` true and changes nothing.
#[pg_extern]
fn stream_register(body: Option<JsonbArg>) -> JsonOut {
    let r = wire::Register::parse(&required("body", body));
    JsonOut::of(&spi::spi(|client| streams::register(client, &r)))
}

/// A query's state rows in one source partition (`{query_id, partition_id,
/// keys, key_prefix, ripe_at_or_before}`): `{success, rows: [{key, value,
/// updated_at}]}` sorted by key.
#[pg_extern]
fn stream_state_get(body: Option<JsonbArg>) -> JsonOut {
    let g = wire::StateGet::parse(&required("body", body));
    JsonOut(spi::spi(|client| streams::state_get(client, &g)))
}

/// One cycle of a streaming query over one source partition
/// (`{query_id, partition_id, consumer_group, state_ops, push_items, ack,
/// release_lease}`): its state writes, pushes and ack, all or nothing.
#[pg_extern]
fn stream_cycle(body: Option<JsonbArg>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let c = wire::Cycle::parse(&required("body", body));
    JsonOut::of(&spi::spi(|client| cycle::run(client, &c, producer)))
}

/// The registered streaming queries by name, a page of at most `limit`
/// (1 to 1 000) after `after`, each with its state counted.
#[pg_extern]
fn stream_queries(
    after: default!(Option<&str>, "NULL"),
    limit: default!(Option<i32>, 100),
) -> JsonOut {
    let limit = limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        errors::invalid("limit", format!("{limit} is not between 1 and 1000"));
    }
    JsonOut::of(&spi::spi(|client| {
        streams::list(client, after, limit as i64)
    }))
}

/// Deletes a streaming query and all its state (a query no worker runs
/// any more): `deleted` false when there is none of that name.
#[pg_extern]
fn stream_delete(name: Option<&str>) -> JsonOut {
    let name = name.unwrap_or_else(|| errors::invalid("name", "is required"));
    JsonOut::of(&spi::spi(|client| streams::delete(client, name)))
}
