//! Pops through the proxy. A pop of one queue runs on the queue's shard. A
//! pop by namespace or task (no queue) asks the shards one after the
//! other, starting at the next shard each call, and answers the first that
//! claimed something: one pop is one lease on one shard, as without a
//! proxy, and no shard is always asked first. A shard that can not be
//! reached is passed by (each shard is asked in a subtransaction of its
//! own); only when none can be reached does the pop fail.

use std::cell::Cell;

use pgrx::prelude::*;
use queen_datum::{JsonOut, JsonbArg};
use queen_frames::pop_body::decode_pop_answer;

use crate::errors;
use crate::remote;
use crate::route::Router;

thread_local! {
    /// The shard a namespace pop of this backend asks first next time.
    static NEXT: Cell<i32> = const { Cell::new(0) };
}

/// The shards a pop asks, in order.
fn shards_for(router: &Router, queue: Option<&str>) -> Vec<i32> {
    if let Some(q) = queue {
        return vec![router.name(q)];
    }
    let all: Vec<i32> = router.all().collect();
    if all.is_empty() {
        errors::raise(
            "55000",
            "the proxy has no shards yet: add them with queen.shard_add(dsn)",
        );
    }
    let start = NEXT.with(|n| {
        let s = n.get();
        n.set(s.wrapping_add(1));
        s.rem_euclid(all.len() as i32) as usize
    });
    all[start..].iter().chain(&all[..start]).copied().collect()
}

/// Whether a shard's pop answer holds messages: read without parsing the
/// messages, whose payloads may be any JSON a push took (a lone surrogate,
/// deep nesting), which a value tree refuses.
fn json_popped(answer: &str) -> bool {
    if answer.is_empty() || answer == "null" {
        return false;
    }
    remote::fields("a shard's pop", answer)
        .get("messages")
        .is_some_and(|m| !remote::elements("a shard's pop", m.get()).is_empty())
}

fn frames_popped(answer: &[u8]) -> bool {
    decode_pop_answer(answer).is_ok_and(|a| !a.claims.is_empty())
}

/// A pop (`sql`, the remote pop or framed pop) on the shards in turn: the
/// first answer that `popped` says claimed something, else the last. With
/// one shard asked, its answer is not read.
fn pop_on<T: pgrx::FromDatum + pgrx::IntoDatum + Default>(
    sql: &'static str,
    popped: impl Fn(&T) -> bool,
    queue: Option<&str>,
    partition: Option<&str>,
    consumer_group: Option<&str>,
    batch: Option<i32>,
    options: Option<JsonbArg>,
) -> T {
    let router = Router::load();
    let options = options.map(|o| o.0);
    let shards = shards_for(&router, queue);
    let mut last = None;
    let mut away = None;
    for &shard in &shards {
        let args = [
            shard.into(),
            queue.into(),
            partition.into(),
            consumer_group.into(),
            batch.into(),
            options.as_deref().into(),
        ];
        let a: T = if shards.len() == 1 {
            remote::one(sql, &args).unwrap_or_default()
        } else {
            match remote::try_one::<T>(sql, &args) {
                Ok(a) => a.unwrap_or_default(),
                // A shard that can not be reached (no connection, or one
                // it ended: shutting down, restarted) is passed by: the
                // others serve the pop (its messages wait for it).
                Err(e) if remote::unreachable(&e) => {
                    away.get_or_insert(e);
                    continue;
                }
                Err(e) => errors::reraise(&e),
            }
        };
        if shards.len() == 1 || popped(&a) {
            return a;
        }
        last = Some(a);
    }
    match (last, away) {
        (Some(a), _) => a,
        // No shard could be reached.
        (None, Some(e)) => errors::reraise(&e),
        (None, None) => unreachable!("one shard asked"),
    }
}

#[pg_extern(volatile)]
fn pop(
    queue: Option<&str>,
    partition: default!(Option<&str>, "NULL"),
    consumer_group: default!(Option<&str>, "NULL"),
    batch: default!(Option<i32>, 1),
    options: default!(Option<JsonbArg>, "'{}'"),
) -> JsonOut {
    let answer: String = pop_on(
        "SELECT queen_remote.pop($1, $2, $3, $4, $5, $6::jsonb)::text",
        |a: &String| json_popped(a),
        queue,
        partition,
        consumer_group,
        batch,
        options,
    );
    JsonOut(if answer.is_empty() {
        "null".to_owned()
    } else {
        answer
    })
}

#[pg_extern(volatile)]
fn pop_frames(
    queue: Option<&str>,
    partition: default!(Option<&str>, "NULL"),
    consumer_group: default!(Option<&str>, "NULL"),
    batch: default!(Option<i32>, 1),
    options: default!(Option<JsonbArg>, "'{}'"),
) -> Vec<u8> {
    pop_on(
        "SELECT queen_remote.pop_frames($1, $2, $3, $4, $5, $6::jsonb)",
        |a: &Vec<u8>| frames_popped(a),
        queue,
        partition,
        consumer_group,
        batch,
        options,
    )
}

/// A queue's version (what a long poll watches); for a namespace or task,
/// the sum over the shards (it only grows, as each shard's does).
#[pg_extern(volatile)]
fn queue_version(
    queue: Option<&str>,
    namespace: default!(Option<&str>, "NULL"),
    task: default!(Option<&str>, "NULL"),
) -> i64 {
    if let Some(q) = queue {
        let shard = Router::load().name(q);
        return remote::one::<i64>(
            "SELECT queen_remote.queue_version($1, $2, $3, $4)",
            &[shard.into(), q.into(), namespace.into(), task.into()],
        )
        .unwrap_or(0);
    }
    remote::all::<i64>(
        "SELECT queen_remote.queue_version_all($1, $2)",
        &[namespace.into(), task.into()],
    )
    .into_iter()
    .sum()
}
