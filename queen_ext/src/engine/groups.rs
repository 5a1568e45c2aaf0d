//! Consumer groups as an operator manages them: delete their cursors, move
//! them (seek), and change where a group starts (their readers are in
//! `reads::groups`).

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::cursors;
use crate::catalog::ends;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
/// Deletes a group's cursors (on queue `qid`, or everywhere), and with
/// `delete_metadata` its subscription too, so a later pop subscribes anew.
pub fn delete(
    c: &mut SpiClient<'_>,
    group: &str,
    qid: Option<i64>,
    delete_metadata: bool,
) -> Value {
    // A group made again reads these partitions from its subscription.
    ends::cursors_moved_back();
    // Cursor rows are taken in (partition_id, consumer_group) order.
    let deleted = if cursors::as_states() {
        let ids: Vec<i64> = exec(
            c,
            query!("consumer_group_delete"),
            &[spi::TEXT, spi::INT8],
            &[group.into(), qid.into()],
        )
        .map(|r| spi::col::<i64>(&r, "id"))
        .collect();
        cursors::delete_states(c, &ids);
        ids.len()
    } else {
        exec(
            c,
            query!("cursor_rows/consumer_group_delete"),
            &[spi::TEXT, spi::INT8],
            &[group.into(), qid.into()],
        )
        .len()
    };
    let metadata = if delete_metadata {
        exec(
            c,
            query!("groups_delete_subscriptions"),
            &[spi::TEXT, spi::INT8],
            &[group.into(), qid.into()],
        )
        .len()
    } else {
        0
    };
    json!({"success": true, "consumerGroup": group, "partitionsDeleted": deleted, "subscriptionsDeleted": metadata})
}

/// Sets where a group starts on partitions it has not read yet.
pub fn set_subscription(c: &mut SpiClient<'_>, group: &str, subscription_timestamp: &str) -> Value {
    let updated = exec(
        c,
        query!("consumer_group_subscription"),
        &[spi::TEXT, spi::TEXT],
        &[group.into(), subscription_timestamp.into()],
    )
    .len();
    if updated == 0 {
        errors::undefined("consumer group", group);
    }
    json!({"success": true, "consumerGroup": group, "queues": updated})
}

/// Deletes a group's cursors (on `queue`, or everywhere) as `delete` does,
/// answered as Queen's server answers it. An unknown queue deletes nothing.
pub fn remove(
    c: &mut SpiClient<'_>,
    group: &str,
    queue: Option<(&str, Option<i64>)>,
    delete_metadata: bool,
) -> Value {
    let deleted = match queue {
        Some((_, None)) => 0,
        Some((_, Some(qid))) => delete(c, group, Some(qid), delete_metadata)["partitionsDeleted"]
            .as_i64()
            .unwrap_or(0),
        None => delete(c, group, None, delete_metadata)["partitionsDeleted"]
            .as_i64()
            .unwrap_or(0),
    };
    let mut out = json!({"success": true, "consumerGroup": group, "deletedPartitions": deleted,
                         "metadataDeleted": delete_metadata});
    if let Some((name, _)) = queue {
        out["queueName"] = json!(name);
    }
    out
}

/// Sets where a group starts on partitions it has not read yet, answered
/// as Queen's server answers it (also when the group has no subscription).
pub fn set_timestamp(c: &mut SpiClient<'_>, group: &str, timestamp: &str) -> Value {
    let updated = exec(
        c,
        query!("consumer_group_subscription"),
        &[spi::TEXT, spi::TEXT],
        &[group.into(), timestamp.into()],
    )
    .len();
    json!({"success": true, "consumerGroup": group, "newTimestamp": timestamp,
           "rowsUpdated": updated})
}

/// Where a seek moves a cursor.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SeekTarget<'a> {
    Beginning,
    End,
    /// The first message written at or after this time.
    Timestamp(&'a str),
}

impl SeekTarget<'_> {
    fn parts(&self) -> (&'static str, Option<&str>) {
        match self {
            SeekTarget::Beginning => ("beginning", None),
            SeekTarget::End => ("end", None),
            SeekTarget::Timestamp(t) => ("timestamp", Some(t)),
        }
    }
}

/// Moves a group's cursors on the partitions of queue `qid` (one, when
/// `partition` names it), dropping open leases. Answers how many moved.
pub fn seek_partitions(
    c: &mut SpiClient<'_>,
    group: &str,
    qid: i64,
    partition: Option<&str>,
    target: SeekTarget<'_>,
) -> usize {
    let (kind, timestamp) = target.parts();
    seek_cursors(
        c,
        [
            query!("groups_seek_partitions_create"),
            query!("groups_seek_partitions_move"),
            query!("cursor_rows/groups_seek_partitions"),
        ],
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::TEXT, spi::TEXT],
        vec![
            qid.into(),
            group.into(),
            kind.into(),
            timestamp.into(),
            partition.into(),
        ],
    )
}

/// A seek's writes: the cursors the group lacks on the target's partitions
/// made there (`create`, one row per target partition, which it answers
/// the count of), then the others moved there (`moved`, made again until a
/// run locks none: a state another transaction replaced while the seek
/// waited for it is moved by the next run). On a schema that keeps cursors
/// as rows, `rows` does both (one row per target partition).
fn seek_cursors(
    c: &mut SpiClient<'_>,
    [create, moved, rows]: [&'static str; 3],
    types: &[pgrx::pg_sys::PgOid],
    args: Vec<pgrx::datum::DatumWithOid<'_>>,
) -> usize {
    ends::cursors_moved_back();
    if !cursors::as_states() {
        return exec(c, rows, types, &args).len();
    }
    let partitions = exec(c, create, types, &args).len();
    cursors::until_settled(
        || {
            let mut rows = 0;
            for r in spi::exec_unsorted(c, moved, types, &args) {
                rows += 1;
                if spi::col::<bool>(&r, "moved") {
                    crate::catalog::replaced::note(spi::col::<i64>(&r, "cursor_id"));
                }
            }
            rows
        },
        "a seek",
    );
    partitions
}
