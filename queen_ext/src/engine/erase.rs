//! Deleting a message by its address: every live copy of its transaction
//! id gets a tombstone over its offset (pop skips it for every group) and
//! its dead letters are deleted. Finding those copies is shared with the
//! message reader (`reads::messages`).

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::engine::deleted;
use crate::engine::push::txn_hash;
use crate::engine::segments;
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::segment::Segment;

/// The offsets of `pid` whose frame carries transaction id `txn`, among the
/// newest `queen.message_lookup_segments` sidecar rows, each with the
/// segment holding it; oldest first.
pub fn locate(client: &mut SpiClient<'_>, pid: i64, txn: &str) -> Vec<(i64, Segment)> {
    let hash = txn_hash(txn);
    let mut offsets = Vec::new();
    for r in exec(
        client,
        query!("messages_sidecar_find"),
        &[spi::INT8, spi::INT8, spi::INT8],
        &[
            pid.into(),
            hash.into(),
            settings::message_lookup_segments().into(),
        ],
    ) {
        let base: i64 = spi::col(&r, "base_offset");
        let hashes: Vec<Option<i64>> = spi::col(&r, "txn_hashes");
        for (i, h) in hashes.iter().enumerate() {
            if *h == Some(hash) {
                offsets.push(base + i as i64);
            }
        }
    }
    let mut out = Vec::new();
    for offset in offsets {
        // The hash may collide: the frame says whether it is this id.
        let Some(seg) = segments::covering(client, pid, offset) else {
            continue;
        };
        let same = seg
            .frames()
            .nth((offset - seg.base_offset) as usize)
            .is_some_and(|f| f.transaction_id == txn);
        if same {
            out.push((offset, seg));
        }
    }
    out
}

/// Deletes a message: every live copy of the transaction id in the
/// partition gets a tombstone (its frame stays in its segment; no group is
/// handed it again), and its dead letters are deleted. Answers Queen's
/// success body with what went; raises 42704 when nothing did.
pub fn delete(client: &mut SpiClient<'_>, pid: i64, txn: &str) -> Value {
    let missing = || errors::undefined("message", &format!("{pid}/{txn}"));
    // The lock order: the partition first (a push, a retention step and a
    // dead-letter move take it before any leaf), then the segments, the
    // tombstones and the dead letters; everything below is read under it.
    let locked = exec(
        client,
        query!("messages_delete_lock_partition"),
        &[spi::INT8],
        &[pid.into()],
    )
    .next()
    .is_some();
    if !locked {
        missing()
    }
    let mut located: Vec<i64> = locate(client, pid, txn)
        .into_iter()
        .map(|(o, _)| o)
        .collect();
    located.sort_unstable();
    let mut offsets = Vec::new();
    for offset in located {
        // The segment is held (FOR NO KEY UPDATE) until this transaction
        // ends: a dead-letter write of it waits, then sees the tombstone
        // and writes nothing. A retention step deleting it waits for the
        // partition, and then deletes the tombstone with it.
        let held = exec(
            client,
            query!("messages_delete_lock_segment"),
            &[spi::INT8, spi::INT8],
            &[pid.into(), offset.into()],
        )
        .next()
        .and_then(|r| spi::opt::<i64>(&r, "end_offset"))
        .is_some_and(|end| end >= offset);
        if held {
            offsets.push(offset);
        }
    }
    let tombstoned = if offsets.is_empty() {
        Vec::new()
    } else {
        deleted::mark(client, pid, &offsets, txn)
    };
    let dead = exec(
        client,
        query!("messages_delete_dead"),
        &[spi::INT8, spi::TEXT],
        &[pid.into(), txn.into()],
    )
    .next()
    .map(|r| spi::col::<i64>(&r, "deleted"))
    .unwrap_or(0);
    if tombstoned.is_empty() && dead == 0 {
        missing()
    }
    json!({
        "success": true,
        "partitionId": pid.to_string(),
        "transactionId": txn,
        "message": "Message deleted successfully",
        "deletedOffsets": tombstoned,
        "deadLettersDeleted": dead,
    })
}
