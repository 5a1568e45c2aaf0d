//! Consumer groups as an operator manages them: list, inspect, delete their
//! cursors, move them (seek), and change where a group starts.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::QUEUE_MODE;

/// Every consumer group with, per queue, its partitions and lag (messages
/// kept past its cursors).
pub fn list(c: &mut SpiClient<'_>) -> Value {
    let rows = exec(
        c,
        query!("consumer_groups_list"),
        &[spi::TEXT],
        &[QUEUE_MODE.into()],
    );
    let mut groups: Vec<Value> = Vec::new();
    for r in rows {
        let group: String = spi::col(&r, "consumer_group");
        let entry = json!({"queue": spi::col::<String>(&r, "queue"), "partitions": spi::col::<i64>(&r, "partitions"),
                           "lag": spi::col::<i64>(&r, "lag")});
        match groups.last_mut() {
            Some(g) if g["consumerGroup"] == group.as_str() => {
                g["queues"].as_array_mut().unwrap().push(entry)
            }
            _ => groups.push(json!({"consumerGroup": group, "queues": [entry]})),
        }
    }
    json!({"consumerGroups": groups, "total": groups.len()})
}

/// One group: its cursor and lease on every partition it has read.
pub fn get(c: &mut SpiClient<'_>, group: &str) -> Value {
    let rows: Vec<Value> = exec(
        c,
        query!("consumer_group_get"),
        &[spi::TEXT],
        &[group.into()],
    )
    .map(|r| {
        let committed: i64 = spi::col(&r, "committed");
        let last: i64 = spi::col(&r, "last_offset");
        json!({"queue": spi::col::<String>(&r, "queue"), "partition": spi::col::<String>(&r, "partition"),
               "partitionId": spi::col::<i64>(&r, "partition_id").to_string(), "committedOffset": committed,
               "lastOffset": last, "lag": (last - committed).max(0), "leased": spi::col::<bool>(&r, "leased")})
    })
    .collect();
    if rows.is_empty() {
        errors::undefined("consumer group", group);
    }
    json!({"consumerGroup": group, "partitions": rows})
}

/// Deletes a group's cursors (on queue `qid`, or everywhere), and with
/// `delete_metadata` its subscription too, so a later pop subscribes anew.
pub fn delete(
    c: &mut SpiClient<'_>,
    group: &str,
    qid: Option<i64>,
    delete_metadata: bool,
) -> Value {
    // Cursor rows are taken in (partition_id, consumer_group) order.
    let deleted = exec(
        c,
        query!("consumer_group_delete"),
        &[spi::TEXT, spi::INT8],
        &[group.into(), qid.into()],
    )
    .len();
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

/// Moves a group's cursors on a queue to `target` (beginning, end, or
/// the first message written at or after `timestamp`), dropping open leases.
pub fn seek(
    c: &mut SpiClient<'_>,
    group: &str,
    queue: &str,
    qid: i64,
    target: &str,
    timestamp: Option<&str>,
) -> Value {
    let moved = exec(
        c,
        query!("consumer_group_seek"),
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::TEXT],
        &[qid.into(), group.into(), target.into(), timestamp.into()],
    )
    .len();
    json!({"success": true, "consumerGroup": group, "queue": queue, "partitions": moved})
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
