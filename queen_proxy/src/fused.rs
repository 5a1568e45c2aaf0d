//! Fused calls through the proxy (a front-end's many requests in one call):
//! the requests whose items all live on one shard go to that shard as one
//! fused call; a request spanning shards is made on its own, split as a
//! push or an ack alone is. One answer per request, in request order, each
//! `{"ok": ...}` or `{"sqlstate", "error", "detail"}`, as a shard answers;
//! a shard that fails fails only the requests it was given.

use std::collections::BTreeMap;

use pgrx::prelude::*;
use queen_datum::JsonOut;
use serde_json::{json, Value};

use crate::ack;
use crate::errors::{self, Caught};
use crate::push;
use crate::remote;
use crate::route::Router;

/// One request's answer in a fused answer.
fn answer(r: Result<String, Caught>) -> Value {
    match r.and_then(|a| {
        serde_json::from_str::<Value>(&a).map_err(|_| {
            Caught::new(
                "XX000",
                "a shard answered what can not be read: the outcome is unknown",
            )
        })
    }) {
        Ok(a) => json!({ "ok": a }),
        Err(e) => errors::answer_json(&e),
    }
}

/// Runs the requests of each shard as one fused call (`call(shard, ks)`,
/// answering one element per request) and puts the answers at the
/// requests' places.
fn per_shard(
    answers: &mut [Value],
    groups: BTreeMap<i32, Vec<usize>>,
    call: impl Fn(i32, &[usize]) -> Result<Option<String>, Caught>,
) {
    for (shard, ks) in groups {
        // Once a shard was called, nothing here raises: a shard's part may
        // have committed, and an ERROR of the whole call would have its
        // caller make every request again.
        let failed = match call(shard, &ks) {
            Ok(Some(a)) => match serde_json::from_str::<Vec<Value>>(&a) {
                Ok(each) if each.len() == ks.len() => {
                    for (k, v) in ks.iter().zip(each) {
                        answers[*k] = v;
                    }
                    continue;
                }
                _ => unreadable(shard, "not one element per request"),
            },
            Ok(None) => unreadable(shard, "NULL"),
            Err(e) => e,
        };
        let failed = errors::answer_json(&failed);
        for k in ks {
            answers[k] = failed.clone();
        }
    }
}

/// The answer of a request whose shard answered what can not be read: it
/// may have been applied there (XX000, outcome unknown).
fn unreadable(shard: i32, what: &str) -> Caught {
    Caught::new(
        "XX000",
        format!("shard {shard} answered the fused call with {what}: the outcome of its requests is unknown"),
    )
}

fn bounded<T>(field: &str, v: Option<Vec<T>>) -> Vec<T> {
    v.unwrap_or_else(|| errors::raise("22023", format!("{field}: is required")))
}

#[pg_extern(volatile)]
fn push_fused(
    bodies: Option<pgrx::Array<'_, &[u8]>>,
    binary: Option<Vec<Option<bool>>>,
    producers: Option<Vec<Option<String>>>,
) -> JsonOut {
    let bodies = bodies.unwrap_or_else(|| errors::raise("22023", "bodies: is required"));
    let bodies: Vec<Option<&[u8]>> = bodies.iter().collect();
    let binary = bounded("binary", binary);
    let producers = producers.unwrap_or_else(|| vec![None; bodies.len()]);
    if binary.len() != bodies.len() || producers.len() != bodies.len() {
        errors::raise("22023", "binary, producers: must have one element per body");
    }
    let router = Router::load();
    let mut answers = vec![Value::Null; bodies.len()];
    let mut groups: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for k in 0..bodies.len() {
        let body = bodies[k].unwrap_or_default();
        let producer = producers[k].as_deref();
        let split = if binary[k].unwrap_or(false) {
            push::split_binary(body, &router).0.map_whole()
        } else {
            match std::str::from_utf8(body) {
                Ok(text) => push::split_json(text, &router).map_whole(),
                Err(_) => Some(0),
            }
        };
        match split {
            Some(shard) => groups.entry(shard).or_default().push(k),
            None if binary[k].unwrap_or(false) => {
                answers[k] = answer(push::push_qpb(body, producer, &router, remote::try_one))
            }
            None => {
                let text = std::str::from_utf8(body).expect("checked above");
                answers[k] = answer(push::push_json(text, producer, &router, remote::try_one));
            }
        }
    }
    let wait = remote::lock_wait();
    per_shard(&mut answers, groups, |shard, ks| {
        let b: Vec<Option<&[u8]>> = ks.iter().map(|&k| bodies[k]).collect();
        let f: Vec<Option<bool>> = ks.iter().map(|&k| binary[k]).collect();
        let p: Vec<Option<&str>> = ks.iter().map(|&k| producers[k].as_deref()).collect();
        remote::try_one::<String>(
            "SELECT queen_remote.push_fused($1, $2, $3, $4, $5)::text",
            &[
                shard.into(),
                wait.as_str().into(),
                b.into(),
                f.into(),
                p.into(),
            ],
        )
    });
    remote::settled(JsonOut(Value::Array(answers).to_string()))
}

#[pg_extern(volatile)]
fn ack_fused(bodies: Option<Vec<Option<String>>>) -> JsonOut {
    let bodies = bounded("bodies", bodies);
    let router = Router::load();
    let mut answers = vec![Value::Null; bodies.len()];
    let mut groups: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for (k, body) in bodies.iter().enumerate() {
        let body = body.as_deref().unwrap_or_default();
        match errors::catch(|| ack::split(body, &router)) {
            Ok(split) => match split.map_whole() {
                Some(shard) => groups.entry(shard).or_default().push(k),
                None => answers[k] = answer(ack::ack_body(body, &router, remote::try_one)),
            },
            Err(e) => answers[k] = errors::answer_json(&e),
        }
    }
    let wait = remote::lock_wait();
    per_shard(&mut answers, groups, |shard, ks| {
        let b: Vec<Option<&str>> = ks.iter().map(|&k| bodies[k].as_deref()).collect();
        remote::try_one::<String>(
            "SELECT queen_remote.ack_fused($1, $2, $3)::text",
            &[shard.into(), wait.as_str().into(), b.into()],
        )
    });
    remote::settled(JsonOut(Value::Array(answers).to_string()))
}

/// Renewals: asked of each shard on its own; for each request, the answer
/// of the shard that renewed it. A request no shard renewed while a shard
/// could not be reached answers that shard's ERROR (its lease may be held
/// there).
#[pg_extern(volatile)]
fn renew_fused(
    lease_ids: Option<Vec<Option<String>>>,
    seconds: Option<Vec<Option<i32>>>,
) -> JsonOut {
    let lease_ids = bounded("lease_ids", lease_ids);
    let seconds = seconds.unwrap_or_else(|| vec![None; lease_ids.len()]);
    let asked = lease_ids.len();
    let (answers, away): (Vec<String>, _) = remote::each_shard(
        "SELECT queen_remote.renew_fused($1, $2, $3)::text",
        |shard| {
            vec![
                shard.into(),
                lease_ids.clone().into(),
                seconds.clone().into(),
            ]
        },
    );
    let mut per_shard: Vec<Vec<Value>> = answers
        .iter()
        .map(|a| match remote::parse("a shard's fused renewal", a) {
            Value::Array(each) => each,
            other => panic!("a shard's fused renewal is not an array: {other}"),
        })
        .collect();
    if per_shard.is_empty() {
        match away {
            Some(e) => errors::reraise(&e),
            None => errors::raise(
                "55000",
                "the proxy has no shards yet: add them with queen.shard_add(dsn)",
            ),
        }
    }
    let merged: Vec<Value> = (0..asked)
        .map(|k| {
            let each: Vec<Value> = per_shard.iter_mut().map(|s| s[k].take()).collect();
            let held = each
                .iter()
                .position(|a| a.pointer("/ok/success").and_then(Value::as_bool) == Some(true));
            match (held, &away) {
                (None, Some(e)) => errors::answer_json(e),
                _ => each
                    .into_iter()
                    .nth(held.unwrap_or(0))
                    .unwrap_or(Value::Null),
            }
        })
        .collect();
    remote::settled(JsonOut(Value::Array(merged).to_string()))
}
