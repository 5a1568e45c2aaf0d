//! Consumer-group administration: list, inspect, delete, seek, and change a
//! group's subscription.

use pgrx::prelude::*;
use serde_json::{json, Value};

use crate::catalog::queues;
use crate::engine::groups;
use crate::pg::errors;
use crate::pg::spi;
use crate::wire::datum::{JsonOut, JsonbArg};
use crate::wire::json::{check_name, Obj};

/// Every consumer group with, per queue, its partitions and lag (messages
/// kept past its cursors).
#[pg_extern]
fn consumer_groups_list() -> JsonOut {
    JsonOut::of(&spi::spi(groups::list))
}

/// One group: its cursor and lease on every partition it has read.
#[pg_extern]
fn consumer_group_get(consumer_group: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    JsonOut::of(&spi::spi(|c| groups::get(c, group)))
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
        let qid = queue.map(|q| queues::require_id(c, q));
        groups::delete(c, group, qid, delete_metadata)
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
        let qid = queues::require_id(c, queue);
        groups::seek(c, group, queue, qid, target, timestamp)
    }))
}

/// Sets where a group starts on partitions it has not read yet.
#[pg_extern]
fn consumer_group_subscription(consumer_group: &str, subscription_timestamp: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    JsonOut::of(&spi::spi(|c| {
        groups::set_subscription(c, group, subscription_timestamp)
    }))
}
