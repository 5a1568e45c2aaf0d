//! Pushes through the proxy. A body whose items all live on one shard goes
//! to that shard unchanged, and its answer comes back unchanged. A body
//! naming queues on several shards is split by shard, each part pushed on
//! its shard, and the answers put back in the order of the caller's items
//! (`index` counts the caller's items). Such a push is made shard by shard:
//! if one shard fails, the ERROR names it and the other shards' messages are
//! stored; pushing again with the same `transactionId`s stores each once.
//! A body the proxy can not read goes whole to one shard, which refuses it
//! with the error it gives when called directly.

use std::borrow::Cow;
use std::collections::BTreeMap;

use pgrx::prelude::*;
use queen_datum::{JsonOut, JsonbArg};
use queen_frames::push_body::{
    decode_push_body_within, encode_push_body, push_body_queues_within, PushGroup,
};
use queen_frames::FrameError;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::errors::{self, Caught};
use crate::remote;
use crate::route::Router;

/// Where the parts of a body go.
pub enum Split<T> {
    /// All of it to one shard, unchanged.
    Whole(i32),
    /// Part by part: each shard's part and, for each of its items, the
    /// caller's index of that item.
    Parts(Vec<(i32, T, Vec<usize>)>),
}

#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow)]
    queue: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Wrapped<T> {
    items: Vec<T>,
}

/// The items of a JSON push body (an array, or `{"items": [...]}`), read as
/// `T`; None when the body or an item can not be read (the shard then says
/// what is wrong).
fn json_items<'a, T: Deserialize<'a>>(body: &'a str) -> Option<Vec<T>> {
    match body.trim_start().as_bytes().first() {
        Some(b'[') => serde_json::from_str(body).ok(),
        Some(b'{') => Some(serde_json::from_str::<Wrapped<T>>(body).ok()?.items),
        _ => None,
    }
}

/// Splits a JSON push body by shard. The body is read once for its queues
/// and, only when they are on several shards, once more for its items.
pub fn split_json(body: &str, router: &Router) -> Split<String> {
    let Some(shards) = json_items::<Named<'_>>(body).and_then(|items| {
        items
            .into_iter()
            .map(|n| Some(router.name(&n.queue?)))
            .collect::<Option<Vec<i32>>>()
    }) else {
        return Split::Whole(0);
    };
    if let Some(shard) = crate::route::single(&shards) {
        return Split::Whole(shard);
    }
    let parts = crate::route::by_shard(&shards);
    let Some(raws) = json_items::<&RawValue>(body).filter(|r| r.len() == shards.len()) else {
        return Split::Whole(0);
    };
    Split::Parts(
        parts
            .into_iter()
            .map(|(shard, at)| {
                let part: Vec<&str> = at.iter().map(|k| raws[*k].get()).collect();
                (shard, format!("[{}]", part.join(",")), at)
            })
            .collect(),
    )
}

/// Splits a binary push body (QPB1) by shard; with whether it asks for
/// counts only. The body's headers are walked for its queues; only a body
/// whose queues are on several shards is decoded, and each shard's part
/// encoded again.
pub fn split_binary(body: &[u8], router: &Router) -> (Split<Vec<u8>>, bool) {
    let max = crate::decompress_max_bytes();
    let too_large = |e: &FrameError| {
        if matches!(e, FrameError::TooLarge { .. }) {
            errors::raise(
                "22P03",
                format!(
                    "binary push body: decompresses to more than \
                     queen_proxy.decompress_max_bytes ({max} bytes)"
                ),
            )
        }
    };
    let (queues, counts_only) = match push_body_queues_within(body, max) {
        Ok(found) => found,
        Err(e) => {
            too_large(&e);
            return (Split::Whole(0), false);
        }
    };
    let shards: Vec<i32> = queues.iter().map(|q| router.name(q)).collect();
    if let Some(shard) = crate::route::single(&shards) {
        return (Split::Whole(shard), counts_only);
    }
    let decoded = match decode_push_body_within(body, max) {
        Ok(decoded) => decoded,
        Err(e) => {
            too_large(&e);
            return (Split::Whole(0), false);
        }
    };
    let mut parts: BTreeMap<i32, (Vec<PushGroup>, Vec<usize>)> = BTreeMap::new();
    let mut next = 0usize;
    for (g, shard) in decoded.groups.into_iter().zip(shards) {
        let n = g.len();
        let part = parts.entry(shard).or_default();
        part.1.extend(next..next + n);
        part.0.push(g);
        next += n;
    }
    let parts = parts
        .into_iter()
        .map(|(shard, (groups, at))| {
            let part = encode_push_body(&groups, counts_only)
                .unwrap_or_else(|e| errors::raise("22P03", format!("binary push body: {e}")));
            (shard, part, at)
        })
        .collect();
    (Split::Parts(parts), counts_only)
}

/// The answers of the parts, as the caller's answer: each item's answer at
/// the caller's index, `index` set to it.
pub fn merge_items(answers: Vec<(String, Vec<usize>)>) -> String {
    let mut merged: Vec<(usize, Value)> = Vec::new();
    for (answer, at) in answers {
        let Value::Array(items) = remote::parse("a shard's push", &answer) else {
            panic!("a shard's item answer is not an array: {answer}");
        };
        for mut item in items {
            let local = item.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            let global = at.get(local).copied().unwrap_or(local);
            if let Some(o) = item.as_object_mut() {
                o.insert("index".into(), Value::from(global));
            }
            merged.push((global, item));
        }
    }
    merged.sort_by_key(|(k, _)| *k);
    Value::Array(merged.into_iter().map(|(_, v)| v).collect()).to_string()
}

/// Counts-only answers (`{"count","queued","duplicate","error"}`) added up.
fn merge_counts(answers: &[String]) -> String {
    let parsed = answers
        .iter()
        .map(|a| remote::parse("a shard's push", a))
        .collect();
    Value::Object(crate::global::summed(parsed)).to_string()
}

const PUSH_TEXT: &str = "SELECT queen_remote.push_text($1, $2, $3, $4)::text";
const PUSH_BINARY: &str = "SELECT queen_remote.push_binary($1, $2, $3, $4)::text";

/// A JSON push, split by shard, each part made by `run`: the answer, or
/// the ERROR of the shard that failed.
pub fn push_json(
    body: &str,
    producer: Option<&str>,
    router: &Router,
    run: remote::Run<String>,
) -> Result<String, Caught> {
    let wait = remote::lock_wait();
    match split_json(body, router) {
        Split::Whole(shard) => text(run(
            PUSH_TEXT,
            &[
                shard.into(),
                wait.as_str().into(),
                body.into(),
                producer.into(),
            ],
        )),
        Split::Parts(parts) => {
            let mut answers = Vec::with_capacity(parts.len());
            for (shard, part, at) in parts {
                let a = text(run(
                    PUSH_TEXT,
                    &[
                        shard.into(),
                        wait.as_str().into(),
                        part.as_str().into(),
                        producer.into(),
                    ],
                ))?;
                answers.push((a, at));
            }
            Ok(merge_items(answers))
        }
    }
}

/// A binary push, split by shard, each part made by `run`.
pub fn push_qpb(
    body: &[u8],
    producer: Option<&str>,
    router: &Router,
    run: remote::Run<String>,
) -> Result<String, Caught> {
    let wait = remote::lock_wait();
    match split_binary(body, router) {
        (Split::Whole(shard), _) => text(run(
            PUSH_BINARY,
            &[
                shard.into(),
                wait.as_str().into(),
                body.into(),
                producer.into(),
            ],
        )),
        (Split::Parts(parts), counts_only) => {
            let mut answers = Vec::with_capacity(parts.len());
            for (shard, part, at) in parts {
                let a = text(run(
                    PUSH_BINARY,
                    &[
                        shard.into(),
                        wait.as_str().into(),
                        part.as_slice().into(),
                        producer.into(),
                    ],
                ))?;
                answers.push((a, at));
            }
            if counts_only {
                let texts: Vec<String> = answers.into_iter().map(|(a, _)| a).collect();
                Ok(merge_counts(&texts))
            } else {
                Ok(merge_items(answers))
            }
        }
    }
}

impl<T> Split<T> {
    /// The shard, when all of it goes to one.
    pub fn map_whole(self) -> Option<i32> {
        match self {
            Split::Whole(shard) => Some(shard),
            Split::Parts(_) => None,
        }
    }
}

fn text(r: Result<Option<String>, Caught>) -> Result<String, Caught> {
    r.map(|a| a.unwrap_or_else(|| "null".to_owned()))
}

/// Queen's push: an array of items, or `{"items": [...]}`.
#[pg_extern(volatile)]
fn push(items: Option<JsonbArg>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let items = items.unwrap_or_else(|| errors::raise("22023", "items: is required"));
    push_text(Some(&items.0), producer)
}

/// `push` with the body as text.
#[pg_extern(volatile)]
fn push_text(items: Option<&str>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = items.unwrap_or_else(|| errors::raise("22023", "items: is required"));
    remote::settled(JsonOut(
        push_json(body, producer, &Router::load(), remote::raising)
            .unwrap_or_else(|e| errors::reraise(&e)),
    ))
}

/// `push` with a binary body (QPB1).
#[pg_extern(volatile)]
fn push_binary(body: Option<&[u8]>, producer: default!(Option<&str>, "NULL")) -> JsonOut {
    let body = body.unwrap_or_else(|| errors::raise("22023", "body: is required"));
    remote::settled(JsonOut(
        push_qpb(body, producer, &Router::load(), remote::raising)
            .unwrap_or_else(|e| errors::reraise(&e)),
    ))
}
