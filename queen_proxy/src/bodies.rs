//! Calls whose key is inside a JSON body and that are made in one
//! transaction on their shard: KV batches (by namespace), locks (namespace
//! `queen-locks`), timer batches (by queue), ephemeral pushes and acks (by
//! queue), KV listings (by namespace), trace records (by partition id), and
//! reads by offset (`fetch`, `partitions_changed`, group positions: by
//! queue). A body spanning shards is refused as a transaction is (22023);
//! a body the proxy can not read goes whole to shard 0, which refuses it.

use pgrx::prelude::*;
use queen_datum::{JsonOut, JsonbArg};
use serde_json::Value;

use crate::remote;
use crate::route::Router;
use crate::txn::Touches;

/// The namespace every lock lives in (the queen extension's `kv::locks`).
const LOCKS_NAMESPACE: &str = "queen-locks";

/// The operations of a body: `operations` of an object, or a bare array.
fn operations(body: &Value) -> impl Iterator<Item = &Value> {
    match body {
        Value::Array(a) => Some(a),
        Value::Object(o) => o.get("operations").and_then(Value::as_array),
        _ => None,
    }
    .into_iter()
    .flatten()
}

fn entries(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The one shard of a body, by what `touch` finds in it.
fn shard_of(body: Option<&JsonbArg>, touch: impl FnOnce(&Router, &Value, &mut Touches)) -> i32 {
    let router = Router::load();
    let mut touches = Touches::default();
    if let Some(value) = body.and_then(|b| serde_json::from_str::<Value>(&b.0).ok()) {
        touch(&router, &value, &mut touches);
    }
    touches.shard()
}

fn on(sql: &'static str, shard: i32, body: Option<JsonbArg>) -> JsonOut {
    let body = body.map(|b| b.0);
    JsonOut(
        remote::one::<String>(sql, &[shard.into(), body.as_deref().into()])
            .unwrap_or_else(|| "null".into()),
    )
}

#[pg_extern(volatile)]
fn kv(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| {
        operations(b).for_each(|op| t.namespace(r, op.get("ns")))
    });
    on("SELECT queen_remote.kv($1, $2::jsonb)::text", shard, body)
}

#[pg_extern(volatile)]
fn locks(body: Option<JsonbArg>) -> JsonOut {
    let shard = Router::load().name(LOCKS_NAMESPACE);
    on(
        "SELECT queen_remote.locks($1, $2::jsonb)::text",
        shard,
        body,
    )
}

#[pg_extern(volatile)]
fn timers(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| {
        operations(b).for_each(|op| t.queue(r, op.get("queue")))
    });
    on(
        "SELECT queen_remote.timers($1, $2::jsonb)::text",
        shard,
        body,
    )
}

#[pg_extern(volatile)]
fn ephemeral_push(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| t.queue(r, b.get("queue")));
    on(
        "SELECT queen_remote.ephemeral_push($1, $2::jsonb)::text",
        shard,
        body,
    )
}

#[pg_extern(volatile)]
fn ephemeral_ack(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| t.queue(r, b.get("queue")));
    on(
        "SELECT queen_remote.ephemeral_ack($1, $2::jsonb)::text",
        shard,
        body,
    )
}

#[pg_extern(volatile)]
fn kv_list(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| t.namespace(r, b.get("namespace")));
    on(
        "SELECT queen_remote.kv_list($1, $2::jsonb)::text",
        shard,
        body,
    )
}

#[pg_extern(volatile)]
fn trace_record(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| {
        t.partition(r, b.get("partitionId"))
    });
    on(
        "SELECT queen_remote.trace_record($1, $2::jsonb)::text",
        shard,
        body,
    )
}

#[pg_extern(volatile)]
fn fetch(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| {
        entries(b).for_each(|e| t.queue(r, e.get("queue")))
    });
    on(
        "SELECT queen_remote.fetch($1, $2::jsonb)::text",
        shard,
        body,
    )
}

#[pg_extern(volatile)]
fn partitions_changed(body: Option<JsonbArg>) -> JsonOut {
    let shard = shard_of(body.as_ref(), |r, b, t| {
        entries(b).for_each(|e| t.queue(r, e.get("queue")))
    });
    on(
        "SELECT queen_remote.partitions_changed($1, $2::jsonb)::text",
        shard,
        body,
    )
}

/// A group's positions on the queues named in `entries`, on their shard;
/// without entries, on every shard, the entries of all put together.
#[pg_extern(volatile)]
fn consumer_group_positions(body: Option<JsonbArg>) -> JsonOut {
    let value = body
        .as_ref()
        .and_then(|b| serde_json::from_str::<Value>(&b.0).ok());
    if value.as_ref().is_some_and(|v| v.get("entries").is_none()) {
        let text = body.map(|b| b.0);
        let answers: Vec<String> = remote::all(
            "SELECT queen_remote.consumer_group_positions_all($1::jsonb)::text",
            &[text.as_deref().into()],
        );
        let mut merged: Option<Value> = None;
        for a in answers {
            let mut v = remote::parse("consumer_group_positions", &a);
            match &mut merged {
                None => merged = Some(v),
                Some(m) => {
                    if let (Some(Value::Array(into)), Some(Value::Array(more))) =
                        (m.get_mut("entries"), v.get_mut("entries").map(Value::take))
                    {
                        into.extend(more);
                    }
                }
            }
        }
        return JsonOut(merged.unwrap_or(Value::Null).to_string());
    }
    let shard = shard_of(body.as_ref(), |r, b, t| {
        entries(b).for_each(|e| t.queue(r, e.get("queue")))
    });
    on(
        "SELECT queen_remote.consumer_group_positions($1, $2::jsonb)::text",
        shard,
        body,
    )
}
