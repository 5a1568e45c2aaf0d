//! The messages surface: push, pop, ack, lease renewal and transactions,
//! in JSON and in the binary bodies.

use pgrx::prelude::*;

use super::{optional, required, required_text};
use crate::catalog::switches::{self, Surface};
use crate::engine::{ack, pop, push, transaction};
use crate::pg::errors;
use crate::pg::spi;
use crate::wire::ack as ack_wire;
use crate::wire::binary;
use crate::wire::datum::{JsonOut, JsonbArg};
use crate::wire::pop as pop_wire;
use crate::wire::push as push_wire;

/// Pushes Queen's push items (`[{queue, partition, payload, transactionId,
/// traceId}]` or `{"items": [...]}`); answers one result per item.
#[pg_extern]
fn push(items: Option<JsonbArg>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    push_text(Some(&required_text("items", items)), producer)
}

/// `push` for callers that hold the JSON as text (a front-end passing a
/// request body through, a driver sending a string): the same body and
/// answer, parsed once here instead of into jsonb and printed back.
#[pg_extern]
fn push_text(items: Option<&str>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = items.unwrap_or_else(|| errors::invalid("items", "is required"));
    let groups = push_wire::parse_items(body);
    let out = spi::spi(|client| {
        switches::refuse_if_paused(client, Surface::Push);
        push::push_groups(client, &groups, producer, true)
    });
    JsonOut(push_wire::answers_json(&out))
}

/// Pushes a binary push body (QPB1, content type application/x-queen-push).
#[pg_extern]
fn push_binary(body: Option<&[u8]>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = body.unwrap_or_else(|| errors::invalid("body", "is required"));
    let (groups, counts_only) = binary::parse_push_body(body);
    let out = spi::spi(|client| {
        switches::refuse_if_paused(client, Surface::Push);
        push::push_groups(client, &groups, producer, true)
    });
    if counts_only {
        let duplicate = out.iter().filter(|o| o.duplicate).count();
        return JsonOut::of(&serde_json::json!({
            "count": out.len(),
            "queued": out.len() - duplicate,
            "duplicate": duplicate,
            "error": 0,
        }));
    }
    JsonOut(push_wire::answers_json(&out))
}

fn pop_request(
    queue: Option<&str>,
    partition: Option<&str>,
    consumer_group: Option<&str>,
    batch: Option<i32>,
    options: Option<JsonbArg>,
) -> pop_wire::PopRequest {
    let options = optional("options", options);
    pop_wire::PopRequest::parse(queue, partition, consumer_group, batch, &options)
}

/// Leases up to `batch` messages for a consumer group (NULL: queue mode).
#[pg_extern]
fn pop(
    queue: Option<&str>,
    partition: default!(Option<&str>, "NULL"),
    consumer_group: default!(Option<&str>, "NULL"),
    batch: default!(Option<i32>, 1),
    options: default!(Option<JsonbArg>, "'{}'"),
) -> JsonOut {
    let req = pop_request(queue, partition, consumer_group, batch, options);
    JsonOut(spi::spi(|client| {
        pop::pop_in_call(client, &req).to_json_text()
    }))
}

/// The same pop, answered as a framed pop body (QPF1).
#[pg_extern]
fn pop_frames(
    queue: Option<&str>,
    partition: default!(Option<&str>, "NULL"),
    consumer_group: default!(Option<&str>, "NULL"),
    batch: default!(Option<i32>, 1),
    options: default!(Option<JsonbArg>, "'{}'"),
) -> Vec<u8> {
    let req = pop_request(queue, partition, consumer_group, batch, options);
    spi::spi(|client| pop::pop_in_call(client, &req).to_frames())
}

/// A number that grows whenever a message is pushed to the queue `queue`,
/// or (queue NULL) to any queue carrying `namespace` / `task`: what a
/// long-polling front-end watches to know a pop may now find something.
/// 0 for a queue that does not exist.
#[pg_extern]
fn queue_version(
    queue: Option<&str>,
    namespace: default!(Option<&str>, "NULL"),
    task: default!(Option<&str>, "NULL"),
) -> i64 {
    if queue.is_none() && namespace.is_none() && task.is_none() {
        errors::invalid("queue", "is required unless namespace or task is given");
    }
    spi::spi(|c| crate::catalog::queues::version(c, queue, namespace, task))
}

/// Acknowledges messages: one ack object, an array, or
/// `{"acknowledgments": [...], "consumerGroup": ...}`.
#[pg_extern]
fn ack(acks: Option<JsonbArg>) -> JsonOut {
    ack_text(Some(&required_text("acks", acks)))
}

/// `ack` for callers that hold the JSON as text: the same body and answer,
/// parsed once here instead of into jsonb and printed back.
#[pg_extern]
fn ack_text(acks: Option<&str>) -> JsonOut {
    let text = acks.unwrap_or_else(|| errors::invalid("acks", "is required"));
    let parsed = ack_wire::parse_acks_text(text);
    let out = spi::spi(|client| ack::ack_in_call(client, &parsed));
    JsonOut(ack_wire::answers_json(&out))
}

/// Extends a lease by `seconds` (NULL: each queue's lease time).
#[pg_extern]
fn renew_lease(lease_id: Option<&str>, seconds: default!(Option<i32>, "NULL")) -> JsonOut {
    let lease_id = lease_id.unwrap_or_else(|| errors::invalid("lease_id", "is required"));
    let lease_id = ack_wire::parse_renew(lease_id, seconds);
    JsonOut::of(&spi::spi(|client| ack::renew(client, lease_id, seconds)).to_json())
}

/// Pushes and acks, all or nothing.
#[pg_extern]
fn transaction(ops: Option<JsonbArg>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = required("ops", ops);
    JsonOut::of(&spi::spi(|client| {
        transaction::transaction(client, &body, producer, Vec::new(), false)
    }))
}

/// A binary transaction body (QTB1): a JSON head (acks, requiredLeases, the
/// kv and timers riders) and the pushes as pre-framed groups, checked frame
/// by frame and stored as they are. The head's results come first, then the
/// pushed messages in the order written, then the riders.
#[pg_extern]
fn transaction_binary(body: Option<&[u8]>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = body.unwrap_or_else(|| errors::invalid("body", "is required"));
    let (head, groups, counts_only) = binary::parse_txn_body(body);
    JsonOut::of(&spi::spi(|client| {
        transaction::transaction(client, &head, producer, groups, counts_only)
    }))
}
