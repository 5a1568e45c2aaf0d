//! One cycle of a streaming query over one source partition, all or
//! nothing in the caller's transaction: the state writes, the pushes to the
//! sink queues, the ack of the source batch.
//!
//! Lock order: the cycle's advisory lock on (query, partition), which
//! serialises the cycles of one state shard, then the sink partitions (as
//! a push locks them), then the source cursor (as an ack locks it; an idle
//! flush, which carries no ack, locks it first of all, after the advisory
//! lock), then the state rows, written last. An ack whose lease is no longer held raises
//! an error (55000), and everything the cycle wrote goes with it: a worker
//! that lost its partition writes no state and no output. A cycle retried
//! after its first attempt committed finds its lease released and is
//! refused the same way, so its output is never written twice.

use std::collections::BTreeMap;

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use super::wire::{Cycle, StateOp};
use crate::catalog::switches::{self, Surface};
use crate::engine::{ack, push};
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::push as push_wire;

/// The advisory lock class of a cycle's (query, partition).
const CYCLE_LOCK: i32 = 737_049;

/// Runs the cycle; an error anywhere raises, and the caller's transaction
/// takes everything with it.
pub fn run(client: &mut SpiClient<'_>, c: &Cycle, producer: Option<&str>) -> Value {
    let queue_name = source(client, c);
    exec(
        client,
        "SELECT pg_advisory_xact_lock($1, $2)",
        &[spi::INT4, spi::INT4],
        &[CYCLE_LOCK.into(), shard_key(c).into()],
    );
    if c.ack.is_none() {
        if let Some(reason) = flush_deferred(client, c) {
            return json!({
                "success": true,
                "query_id": c.query_id.to_string(),
                "partition_id": c.partition_text,
                "queueName": queue_name,
                "state_ops_applied": 0,
                "push_results": [],
                "ack_result": null,
                "deferred": reason,
            });
        }
    }
    let pushed = if c.push_items.is_empty() {
        Vec::new()
    } else {
        switches::refuse_if_paused(client, Surface::Push);
        let groups = push_wire::items_from_values(&c.push_items);
        push::push_groups(client, &groups, producer, true)
    };
    let ack_result = c.ack.as_ref().map(|a| {
        let done = ack::ack_through(client, &a.ack, c.release_lease, a.count)
            .unwrap_or_else(|e| errors::lease_not_held(format!("ack: {e}; nothing was applied")));
        json!({
            "success": true,
            "count": done.acked,
            "lease_released": done.lease_released,
            "dlq": done.dead_lettered,
        })
    });
    // Last: the rows' stamps are then as close to the commit as they can
    // be, which an idle flush of another worker measures its quiet from.
    write_state(client, c);
    let push_results: Vec<Value> = pushed.iter().map(push_wire::ItemOut::to_json).collect();
    json!({
        "success": true,
        "query_id": c.query_id.to_string(),
        "partition_id": c.partition_text,
        "queueName": queue_name,
        "state_ops_applied": c.state_ops.len(),
        "push_results": push_results,
        "ack_result": ack_result,
    })
}

/// The source partition's queue; an unknown query or partition is refused
/// (42704) before anything is locked.
fn source(client: &mut SpiClient<'_>, c: &Cycle) -> String {
    let row = exec(
        client,
        query!("streams_cycle_source"),
        &[spi::UUID, spi::INT8],
        &[c.query_id.into(), c.partition_id.into()],
    )
    .next()
    .unwrap_or_else(|| errors::undefined("partition", &c.partition_text));
    if !spi::col::<bool>(&row, "query_known") {
        errors::undefined("stream query", &c.query_id.to_string());
    }
    spi::col(&row, "queue_name")
}

/// Why a cycle without an ack (the client's idle flush, which closes the
/// windows whose time has passed) must not be applied now, if it must not.
/// Such a cycle holds no lease, and between its read of the state and this
/// write another worker's cycle may have changed what it read: applying it
/// then would count a window twice or lose a batch. It is put off (answered
/// applied, nothing written: the rows it would close are still there for
/// the next flush) while the group holds a live lease on the partition (a
/// batch is in flight), when a key it deletes is gone (another cycle closed
/// it), and when a key it writes was written less than
/// `queen.stream_flush_quiet_ms` ago (by another cycle, between its read
/// and now: a cycle stamps its rows last, close to its commit). It holds
/// the source cursor from its check to its commit, so no batch starts
/// meanwhile.
fn flush_deferred(client: &mut SpiClient<'_>, c: &Cycle) -> Option<String> {
    if c.state_ops.is_empty() && c.push_items.is_empty() {
        return None;
    }
    // No pop takes the partition from here to the commit: a batch can not
    // start reading the state this flush is about to change.
    // (A group with no cursor there has read nothing: no batch to keep out.)
    ack::hold_cursor(client, c.partition_id, &c.group);
    let keys: Vec<String> = c.state_ops.iter().map(|o| o.key().to_owned()).collect();
    let mut leased = false;
    let mut ages: std::collections::HashMap<String, f64> = std::collections::HashMap::new();
    for row in exec(
        client,
        query!("streams_flush_check"),
        &[spi::UUID, spi::INT8, spi::TEXT, spi::TEXT_ARRAY],
        &[
            c.query_id.into(),
            c.partition_id.into(),
            c.group.as_str().into(),
            keys.into(),
        ],
    ) {
        match spi::opt::<String>(&row, "key") {
            None => leased = spi::col(&row, "leased"),
            Some(key) => {
                ages.insert(key, spi::col(&row, "age_ms"));
            }
        }
    }
    if leased {
        return Some(format!(
            "consumer group {:?} holds a lease on partition {}: a batch is in flight",
            c.group, c.partition_text
        ));
    }
    let quiet = crate::pg::settings::stream_flush_quiet_ms() as f64;
    for op in &c.state_ops {
        match (op, ages.get(op.key())) {
            (StateOp::Delete(key), None) => {
                return Some(format!("state key {key:?} was closed by another cycle"))
            }
            (_, Some(age)) if *age < quiet => {
                return Some(format!(
                "state key {:?} was written {age:.0} ms ago, less than queen.stream_flush_quiet_ms",
                op.key()
            ))
            }
            _ => {}
        }
    }
    None
}

/// The cycle's (query, partition) folded into the advisory lock's second
/// key: two shards that fold alike only wait for each other.
fn shard_key(c: &Cycle) -> i32 {
    let q = c.query_id.as_bytes();
    let folded = q
        .chunks(8)
        .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
        .fold(c.partition_id, |acc, v| acc.rotate_left(17) ^ v);
    spi::advisory_id(folded)
}

/// The state writes, in request order: each key ends as its last op left
/// it, written by one upsert and one delete statement.
fn write_state(client: &mut SpiClient<'_>, c: &Cycle) {
    if c.state_ops.is_empty() {
        return;
    }
    let mut last: BTreeMap<&str, &StateOp> = BTreeMap::new();
    for op in &c.state_ops {
        last.insert(op.key(), op);
    }
    let (mut keys, mut values, mut deleted) = (Vec::new(), Vec::new(), Vec::new());
    for (key, op) in last {
        match op {
            StateOp::Upsert(_, v) => {
                keys.push(key.to_owned());
                values.push(v.clone());
            }
            StateOp::Delete(_) => deleted.push(key.to_owned()),
        }
    }
    if !deleted.is_empty() {
        exec(
            client,
            query!("streams_state_delete"),
            &[spi::UUID, spi::INT8, spi::TEXT_ARRAY],
            &[c.query_id.into(), c.partition_id.into(), deleted.into()],
        );
    }
    if !keys.is_empty() {
        exec(
            client,
            query!("streams_state_upsert"),
            &[spi::UUID, spi::INT8, spi::TEXT_ARRAY, spi::TEXT_ARRAY],
            &[
                c.query_id.into(),
                c.partition_id.into(),
                keys.into(),
                values.into(),
            ],
        );
    }
}
