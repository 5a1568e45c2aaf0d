//! Acks and lease renewals through the proxy. An ack names its partition
//! by id, and the id names its shard; a body of acks on several shards is
//! split by shard and answered in the caller's order, as a push is. A lease
//! id names no shard: a renewal is asked of every shard at once and the
//! shard that holds the lease answers it.

use std::collections::BTreeMap;

use pgrx::prelude::*;
use queen_datum::{JsonOut, JsonbArg};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::errors::{self, Caught};
use crate::push::{merge_items, Split};
use crate::remote;
use crate::route::{self, Router};

/// An ack's partition id, all the first reading of a body keeps.
#[derive(Deserialize)]
struct AckId<'a> {
    #[serde(rename = "partitionId", borrow)]
    partition_id: Option<&'a RawValue>,
}

/// An ack body's object: `{"acknowledgments": [...], ...}`, or one ack.
#[derive(Deserialize)]
struct AckObject<'a> {
    #[serde(borrow)]
    acknowledgments: Option<Vec<AckId<'a>>>,
    #[serde(rename = "partitionId", borrow)]
    partition_id: Option<&'a RawValue>,
}

/// The shard of each ack of a body, read without building its values;
/// None when the body or an ack's partition id can not be read (the shard
/// then says what is wrong).
fn ack_shards(body: &str, router: &Router) -> Option<Vec<i32>> {
    let ids: Vec<Option<&RawValue>> = match body.trim_start().as_bytes().first()? {
        b'[' => serde_json::from_str::<Vec<AckId<'_>>>(body)
            .ok()?
            .into_iter()
            .map(|a| a.partition_id)
            .collect(),
        b'{' => {
            let o: AckObject<'_> = serde_json::from_str(body).ok()?;
            match o.acknowledgments {
                Some(acks) => acks.into_iter().map(|a| a.partition_id).collect(),
                None => vec![o.partition_id],
            }
        }
        _ => return None,
    };
    ids.into_iter()
        .map(|raw| {
            let id: Value = serde_json::from_str(raw?.get()).ok()?;
            Some(router.id("partitionId", route::id_in(Some(&id))?))
        })
        .collect()
}

/// Splits an ack body (one ack, an array, or `{"acknowledgments": [...]}`
/// with its other keys) by shard. The body is read once for its partition
/// ids and, only when they are on several shards, once more whole.
pub fn split(body: &str, router: &Router) -> Split<String> {
    let Some(shards) = ack_shards(body, router) else {
        return Split::Whole(0);
    };
    if let Some(shard) = route::single(&shards) {
        return Split::Whole(shard);
    }
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return Split::Whole(0);
    };
    let (acks, outer): (Vec<Value>, Option<Map<String, Value>>) = match value {
        Value::Array(a) => (a, None),
        Value::Object(mut o) => match o.remove("acknowledgments") {
            Some(Value::Array(a)) => (a, Some(o)),
            Some(_) => return Split::Whole(0),
            None => (vec![Value::Object(o)], None),
        },
        _ => return Split::Whole(0),
    };
    if acks.len() != shards.len() {
        return Split::Whole(0);
    }
    let mut parts: BTreeMap<i32, (Vec<Value>, Vec<usize>)> = BTreeMap::new();
    for (k, (ack, shard)) in acks.into_iter().zip(shards).enumerate() {
        let part = parts.entry(shard).or_default();
        part.0.push(ack);
        part.1.push(k);
    }
    Split::Parts(
        parts
            .into_iter()
            .map(|(shard, (acks, at))| {
                let body = match &outer {
                    Some(o) => {
                        let mut o = o.clone();
                        o.insert("acknowledgments".into(), Value::Array(acks));
                        Value::Object(o)
                    }
                    None => Value::Array(acks),
                };
                (shard, body.to_string(), at)
            })
            .collect(),
    )
}

const ACK_TEXT: &str = "SELECT queen_remote.ack_text($1, $2, $3)::text";

/// An ack body, split by shard, each part made by `run`.
pub fn ack_body(body: &str, router: &Router, run: remote::Run<String>) -> Result<String, Caught> {
    match split(body, router) {
        Split::Whole(shard) => {
            let wait = remote::lock_wait();
            run(ACK_TEXT, &[shard.into(), wait.as_str().into(), body.into()])
                .map(Option::unwrap_or_default)
        }
        Split::Parts(parts) => {
            let mut answers = Vec::with_capacity(parts.len());
            let wait = remote::lock_wait();
            for (shard, part, at) in parts {
                let a = run(
                    ACK_TEXT,
                    &[shard.into(), wait.as_str().into(), part.as_str().into()],
                )?
                .unwrap_or_default();
                answers.push((a, at));
            }
            Ok(merge_items(answers))
        }
    }
}

#[pg_extern(volatile)]
fn ack(acks: Option<JsonbArg>) -> JsonOut {
    let acks = acks.unwrap_or_else(|| errors::raise("22023", "acks: is required"));
    ack_text(Some(&acks.0))
}

#[pg_extern(volatile)]
fn ack_text(acks: Option<&str>) -> JsonOut {
    let body = acks.unwrap_or_else(|| errors::raise("22023", "acks: is required"));
    remote::settled(JsonOut(
        ack_body(body, &Router::load(), remote::raising).unwrap_or_else(|e| errors::reraise(&e)),
    ))
}

/// Of the shards' answers to one renewal, the one that renewed; else the
/// first (every shard answers a lease it does not hold alike).
pub fn renewed(answers: Vec<Value>) -> Value {
    let held = answers
        .iter()
        .position(|a| a.get("success").and_then(Value::as_bool) == Some(true));
    answers
        .into_iter()
        .nth(held.unwrap_or(0))
        .unwrap_or(Value::Null)
}

/// A renewal, asked of each shard on its own (a lease id names no shard):
/// the shard that holds the lease renews it whether or not the others can
/// be reached; when none renewed it and a shard could not be reached, the
/// ERROR says which (the lease may be held there).
#[pg_extern(volatile)]
fn renew_lease(lease_id: Option<&str>, seconds: default!(Option<i32>, "NULL")) -> JsonOut {
    let (answers, away): (Vec<String>, _) = remote::each_shard(
        "SELECT queen_remote.renew_lease($1, $2, $3)::text",
        |shard| vec![shard.into(), lease_id.into(), seconds.into()],
    );
    let answers: Vec<Value> = answers
        .iter()
        .map(|a| remote::parse("a shard's renewal", a))
        .collect();
    let answer = renewed(answers);
    if let Some(e) = away.filter(|_| answer.get("success") != Some(&Value::Bool(true))) {
        errors::reraise(&e);
    }
    JsonOut(answer.to_string())
}
