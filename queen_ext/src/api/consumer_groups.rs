//! Consumer-group administration: list, inspect, delete, seek, and change a
//! group's subscription.

use pgrx::prelude::*;
use serde_json::{json, Value};

use crate::catalog::queues;
use crate::engine::pop::QUEUE_MODE;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::datum::{JsonOut, JsonbArg};
use crate::wire::json::{check_name, Obj};

/// Every consumer group with, per queue, its partitions and lag (messages
/// kept past its cursors).
#[pg_extern]
fn consumer_groups_list() -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
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
    }))
}

/// One group: its cursor and lease on every partition it has read.
#[pg_extern]
fn consumer_group_get(consumer_group: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    JsonOut::of(&spi::spi(|c| {
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
    }))
}

fn queue_id(c: &mut pgrx::spi::SpiClient<'_>, queue: Option<&str>) -> Option<i64> {
    queue.map(|q| {
        queues::find(c, check_name("queue", q))
            .unwrap_or_else(|| errors::undefined("queue", q))
            .id
    })
}

/// Deletes a group's cursors (on one queue, or everywhere), and with
/// `delete_metadata` its subscription too, so a later pop subscribes anew.
#[pg_extern]
fn consumer_group_delete(
    consumer_group: &str,
    queue: default!(Option<&str>, "NULL"),
    delete_metadata: default!(bool, true),
) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    JsonOut::of(&spi::spi(|c| {
        let qid = queue_id(c, queue);
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
                "DELETE FROM queen.consumer_groups WHERE consumer_group = $1 AND ($2::int8 IS NULL OR queue_id = $2) RETURNING 1",
                &[spi::TEXT, spi::INT8],
                &[group.into(), qid.into()],
            )
            .len()
        } else {
            0
        };
        json!({"success": true, "consumerGroup": group, "partitionsDeleted": deleted, "subscriptionsDeleted": metadata})
    }))
}

/// Moves a group's cursors on a queue: `{"position": "beginning" | "end"}`
/// or `{"timestamp": "<ISO 8601>"}` (the first message written at or after
/// it). Open leases are dropped, so the next pop reads from the new cursor.
#[pg_extern]
fn consumer_group_seek(
    consumer_group: &str,
    queue: &str,
    options: default!(Option<JsonbArg>, "'{}'"),
) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    let options: Value = options.map(|a| a.value("options")).unwrap_or(json!({}));
    let o = Obj::new(&options, "options");
    let (position, timestamp) = (o.opt_str("position"), o.opt_str("timestamp"));
    let to_end = o.opt_bool("toEnd").unwrap_or(false);
    let target = match (position, timestamp, to_end) {
        (Some("beginning"), None, false) => "beginning",
        (Some("end"), None, _) | (None, None, true) => "end",
        (None, Some(_), false) => "timestamp",
        (Some(p), None, false) => errors::invalid(
            &o.field("position"),
            format!("{p:?} is not one of beginning, end"),
        ),
        _ => errors::invalid("options", "give one of position, timestamp or toEnd"),
    };
    JsonOut::of(&spi::spi(|c| {
        let qid = queue_id(c, Some(queue)).unwrap();
        let moved = exec(
            c,
            query!("consumer_group_seek"),
            &[spi::INT8, spi::TEXT, spi::TEXT, spi::TEXT],
            &[qid.into(), group.into(), target.into(), timestamp.into()],
        )
        .len();
        json!({"success": true, "consumerGroup": group, "queue": queue, "partitions": moved})
    }))
}

/// Sets where a group starts on partitions it has not read yet.
#[pg_extern]
fn consumer_group_subscription(consumer_group: &str, subscription_timestamp: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    JsonOut::of(&spi::spi(|c| {
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
    }))
}
