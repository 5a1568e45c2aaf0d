//! Streaming queries through the proxy. A query is registered on its source
//! queue's shard, where its state lives beside the source partitions; its
//! state reads and cycles go to the shard of the source partition they
//! name. A cycle is one transaction on one shard: one whose sink queues live
//! on another shard than its source partition is refused (22023, naming
//! them) with nothing written, as a transaction is. The listing and the
//! deletion ask every shard.

use pgrx::prelude::*;
use queen_datum::{JsonOut, JsonbArg};
use serde_json::{json, Value};

use crate::remote;
use crate::route::{self, Router};
use crate::txn::Touches;

fn parsed(body: &Option<String>) -> Option<Value> {
    body.as_deref()
        .and_then(|b| serde_json::from_str::<Value>(b).ok())
}

/// The shard of the source partition a body names; shard 0 (which refuses
/// the body as every shard would) when it names none.
fn partition_shard(router: &Router, body: &Option<Value>) -> i32 {
    match route::id_in(body.as_ref().and_then(|b| b.get("partition_id"))) {
        Some(id) => router.id("partition_id", id),
        None => 0,
    }
}

fn answer(a: Option<String>) -> JsonOut {
    JsonOut(a.unwrap_or_else(|| "null".to_owned()))
}

#[pg_extern(volatile)]
fn stream_register(body: Option<JsonbArg>) -> JsonOut {
    let body = body.map(|b| b.0);
    let router = Router::load();
    let shard = parsed(&body)
        .and_then(|b| {
            b.get("source_queue")
                .and_then(Value::as_str)
                .map(|q| router.name(q))
        })
        .unwrap_or(0);
    answer(remote::one::<String>(
        "SELECT queen_remote.stream_register($1, $2::jsonb)",
        &[shard.into(), body.as_deref().into()],
    ))
}

#[pg_extern(volatile)]
fn stream_state_get(body: Option<JsonbArg>) -> JsonOut {
    let body = body.map(|b| b.0);
    let shard = partition_shard(&Router::load(), &parsed(&body));
    answer(remote::one::<String>(
        "SELECT queen_remote.stream_state_get($1, $2::jsonb)",
        &[shard.into(), body.as_deref().into()],
    ))
}

#[pg_extern(volatile)]
fn stream_cycle(body: Option<JsonbArg>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = body.map(|b| b.0);
    let router = Router::load();
    let value = parsed(&body);
    let mut touches = Touches::default();
    if let Some(v) = &value {
        touches.partition(&router, v.get("partition_id"));
        for item in v
            .get("push_items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            touches.queue(&router, item.get("queue"));
        }
    }
    let shard = touches.shard();
    answer(remote::settled(remote::one::<String>(
        "SELECT queen_remote.stream_cycle($1, $2, $3::jsonb, $4)",
        &[
            shard.into(),
            remote::lock_wait().into(),
            body.as_deref().into(),
            producer.into(),
        ],
    )))
}

/// Every shard's queries by name after `after`, merged: the first `limit`.
#[pg_extern(volatile)]
fn stream_queries(
    after: default!(Option<&str>, "NULL"),
    limit: default!(Option<i32>, 100),
) -> JsonOut {
    let mut queries: Vec<Value> = Vec::new();
    for a in remote::all::<String>(
        "SELECT queen_remote.stream_queries_all($1, $2)",
        &[after.into(), limit.into()],
    ) {
        if let Some(Value::Array(q)) = remote::parse("a shard's stream queries", &a).get("queries")
        {
            queries.extend(q.iter().cloned());
        }
    }
    queries.sort_by_key(|q| crate::global::by_text(q, "name"));
    let limit = limit.unwrap_or(100).max(0) as usize;
    queries.truncate(limit);
    let next = (queries.len() == limit)
        .then(|| queries.last().map(|q| q["name"].clone()))
        .flatten();
    JsonOut(json!({ "queries": queries, "next": next }).to_string())
}

/// A query deleted on every shard that has one of that name.
#[pg_extern(volatile)]
fn stream_delete(name: Option<&str>) -> JsonOut {
    let mut out = json!({ "success": true, "deleted": false, "name": name });
    let mut rows = 0i64;
    for a in remote::all::<String>("SELECT queen_remote.stream_delete_all($1)", &[name.into()]) {
        let a = remote::parse("a shard's stream deletion", &a);
        if a["deleted"] == json!(true) {
            out["deleted"] = json!(true);
            out["query_id"] = a["query_id"].clone();
            rows += a["state_rows"].as_i64().unwrap_or(0);
        }
    }
    if out["deleted"] == json!(true) {
        out["state_rows"] = json!(rows);
    }
    JsonOut(remote::settled(out.to_string()))
}
