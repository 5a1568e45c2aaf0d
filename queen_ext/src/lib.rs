//! queen: a partitioned message log inside PostgreSQL.
//!
//! The public SQL API (schema `queen`) takes and answers JSON shaped like
//! Queen's HTTP bodies, so a front-end passes requests through untouched.

use jsonio::{JsonOut, JsonbArg};
use pgrx::prelude::*;

pub mod ack;
pub mod admin;
pub mod binary;
pub mod consumer_groups;
pub mod dlq;
pub mod errors;
pub mod failures;
pub mod guc;
pub mod json;
pub mod jsonio;
pub mod kv;
pub mod options;
pub mod pop;
pub mod push;
pub mod queues;
pub mod retention;
pub mod segments;
pub mod soft_commit;
pub mod sql;
pub mod sweeper;
pub mod transaction;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!("../../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!(
    "../../sql/retention.sql",
    name = "retention_sql",
    requires = ["schema"]
);
extension_sql_file!("../../sql/privileges.sql", name = "privileges", finalize);

/// The maintenance steps, cycles and their SQL helpers: apart from the public
/// API, callable by `queen_admin` only (sql/privileges.sql). The functions
/// name it in their `#[pg_extern(schema = ...)]`; the schema itself is
/// created by sql/schema.sql.
#[pg_schema]
mod queen_internal {}

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    guc::register();
    sweeper::init_shmem();
    retention::worker::register();
    sweeper::worker::register();
}

fn required_text(field: &str, v: Option<JsonbArg>) -> String {
    v.map(|JsonbArg(t)| t)
        .unwrap_or_else(|| errors::invalid(field, "is required"))
}

fn required(field: &str, v: Option<JsonbArg>) -> serde_json::Value {
    crate::json::parse_value(field, &required_text(field, v))
}

fn optional(field: &str, v: Option<JsonbArg>) -> serde_json::Value {
    v.map(|a| a.value(field))
        .unwrap_or_else(|| serde_json::json!({}))
}

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
    let groups = push::parse_items(body);
    let out = sql::spi(|client| push::push_groups(client, &groups, producer, true));
    JsonOut(push::answers_json(&out))
}

/// Pushes a binary push body (QPB1, content type application/x-queen-push).
#[pg_extern]
fn push_binary(body: Option<&[u8]>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = body.unwrap_or_else(|| errors::invalid("body", "is required"));
    let (groups, counts_only) = binary::parse_push_body(body);
    let out = sql::spi(|client| push::push_groups(client, &groups, producer, true));
    if counts_only {
        let duplicate = out.iter().filter(|o| o.duplicate).count();
        return JsonOut::of(&serde_json::json!({
            "count": out.len(),
            "queued": out.len() - duplicate,
            "duplicate": duplicate,
            "error": 0,
        }));
    }
    JsonOut(push::answers_json(&out))
}

fn pop_request(
    queue: Option<&str>,
    partition: Option<&str>,
    consumer_group: Option<&str>,
    batch: Option<i32>,
    options: Option<JsonbArg>,
) -> pop::PopRequest {
    let options = optional("options", options);
    pop::PopRequest::parse(
        queue,
        partition,
        consumer_group,
        batch.unwrap_or(1),
        &options,
    )
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
    JsonOut(sql::spi(|client| {
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
    sql::spi(|client| pop::pop_in_call(client, &req).to_frames())
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
    sql::spi(|c| {
        sql::exec(
            c,
            "SELECT COALESCE(sum(p.last_offset + 1), 0)::int8 FROM queen.log_partitions p
               JOIN queen.queues q ON q.id = p.queue_id
              WHERE ($1::text IS NULL OR q.name = $1) AND ($2::text IS NULL OR q.namespace = $2)
                AND ($3::text IS NULL OR q.task = $3)",
            &[sql::TEXT, sql::TEXT, sql::TEXT],
            &[queue.into(), namespace.into(), task.into()],
        )
        .next()
        .and_then(|r| r.get::<i64>(1).unwrap())
        .unwrap_or(0)
    })
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
    let parsed = ack::parse_acks_text(text);
    let out = sql::spi(|client| ack::ack_in_call(client, &parsed));
    JsonOut(ack::answers_json(&out))
}

/// Extends a lease by `seconds` (NULL: each queue's lease time).
#[pg_extern]
fn renew_lease(lease_id: Option<&str>, seconds: default!(Option<i32>, "NULL")) -> JsonOut {
    let lease_id = lease_id.unwrap_or_else(|| errors::invalid("lease_id", "is required"));
    JsonOut::of(&sql::spi(|client| ack::renew(client, lease_id, seconds)))
}

/// Pushes and acks, all or nothing.
#[pg_extern]
fn transaction(ops: Option<JsonbArg>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = required("ops", ops);
    JsonOut::of(&sql::spi(|client| {
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
    JsonOut::of(&sql::spi(|client| {
        transaction::transaction(client, &head, producer, groups, counts_only)
    }))
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
    JsonOut::of(&sql::spi(|client| {
        admin::configure(client, queue, &options, mode)
    }))
}

/// Deletes a queue with all its partitions, messages, cursors and dead letters.
#[pg_extern]
fn delete_queue(queue: Option<&str>) -> JsonOut {
    let queue = queue.unwrap_or_else(|| errors::invalid("queue", "is required"));
    JsonOut::of(&sql::spi(|client| admin::delete_queue(client, queue)))
}

#[cfg(any(test, feature = "pg_test"))]
mod pg_tests;
#[cfg(any(test, feature = "pg_test"))]
mod pg_tests_failures;
#[cfg(any(test, feature = "pg_test"))]
mod pg_tests_retention;
#[cfg(any(test, feature = "pg_test"))]
mod pg_tests_sweeper;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec!["shared_preload_libraries = 'queen'"]
    }
}
