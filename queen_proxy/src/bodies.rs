//! Calls whose key is inside a JSON body and that are made in one
//! transaction on their shard: KV batches (by namespace), locks (namespace
//! `queen-locks`), timer batches (by queue), ephemeral pushes and acks (by
//! queue), KV listings (by namespace), trace records (by partition id), and
//! reads by offset (`fetch`, `partitions_changed`, group positions: by
//! queue). A body spanning shards is refused as a transaction is (22023),
//! but for the reads by offset, which only read: their entries are split by
//! shard, each shard reads its own, and the answer's entries come back in
//! the caller's order. A body the proxy can not read goes whole to shard 0,
//! which refuses it.

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

/// A read by offset: `{"entries": [{"queue", ...}], ...}` answering
/// `{"entries": [...], ...}` with one entry per asked entry, in order. With
/// entries on one shard, the body goes to it unchanged. With entries on
/// several, each shard gets the body with its own entries, and their
/// answers' entries are put back at the caller's indexes; `safeTime` is the
/// earliest shard's, `safeTimeDegraded` set if any shard's is, the other
/// fields the first shard's. Each shard applies its own bounds
/// (`queen.fetch_call_max_bytes`, `queen.fetch_max_entries`) to its part.
fn read_entries(sql: &'static str, body: Option<JsonbArg>) -> JsonOut {
    let router = Router::load();
    let value = body
        .as_ref()
        .and_then(|b| serde_json::from_str::<Value>(&b.0).ok());
    let list = value
        .as_ref()
        .and_then(|v| v.get("entries"))
        .and_then(Value::as_array);
    // Entries the proxy can not read (none, or one naming no queue) go
    // whole to shard 0, which answers or refuses them as one database does.
    let Some(shards) = list.and_then(|l| {
        l.iter()
            .map(|e| Some(router.name(e.get("queue")?.as_str()?)))
            .collect::<Option<Vec<i32>>>()
    }) else {
        return on(sql, 0, body);
    };
    if let Some(shard) = crate::route::single(&shards) {
        return on(sql, shard, body);
    }
    let parts = crate::route::by_shard(&shards);
    let (value, list) = (value.as_ref().expect("read"), list.expect("read"));
    let mut merged: Option<Value> = None;
    let mut slots: Vec<Value> = vec![Value::Null; list.len()];
    for (shard, at) in parts {
        let mut part = value.clone();
        part["entries"] = Value::Array(at.iter().map(|k| list[*k].clone()).collect());
        let text = part.to_string();
        let answer: String = remote::one(sql, &[shard.into(), text.as_str().into()])
            .unwrap_or_else(|| "null".into());
        let mut answer = remote::parse("a shard's read", &answer);
        let Some(Value::Array(got)) = answer.get_mut("entries").map(Value::take) else {
            panic!("a shard's read answered no entries: {answer}");
        };
        for (k, entry) in at.into_iter().zip(got) {
            slots[k] = entry;
        }
        match &mut merged {
            None => merged = Some(answer),
            Some(m) => fold_read(m, &answer),
        }
    }
    let mut merged = merged.expect("two shards asked");
    merged["entries"] = Value::Array(slots);
    JsonOut(merged.to_string())
}

/// Folds a further shard's answer fields (all but `entries`) into `into`.
fn fold_read(into: &mut Value, more: &Value) {
    if let (Some(a), Some(b)) = (
        into.get("safeTime").and_then(Value::as_str),
        more.get("safeTime").and_then(Value::as_str),
    ) {
        // The same fixed-width UTC form on every shard: text order is time order.
        if b < a {
            into["safeTime"] = Value::from(b);
        }
    }
    if more.get("safeTimeDegraded") == Some(&Value::Bool(true)) {
        into["safeTimeDegraded"] = Value::Bool(true);
    }
}

#[pg_extern(volatile)]
fn fetch(body: Option<JsonbArg>) -> JsonOut {
    read_entries("SELECT queen_remote.fetch($1, $2::jsonb)::text", body)
}

#[pg_extern(volatile)]
fn partitions_changed(body: Option<JsonbArg>) -> JsonOut {
    read_entries(
        "SELECT queen_remote.partitions_changed($1, $2::jsonb)::text",
        body,
    )
}

/// A group's positions on the queues named in `entries`, on their shards;
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
    read_entries(
        "SELECT queen_remote.consumer_group_positions($1, $2::jsonb)::text",
        body,
    )
}
