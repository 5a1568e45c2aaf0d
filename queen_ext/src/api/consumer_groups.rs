//! Consumer-group administration: list, inspect, delete, seek, and change a
//! group's subscription.

use crate::wire::datum::ArgValue;
use pgrx::prelude::*;
use serde_json::{json, Value};

use crate::catalog::queues;
use crate::engine::groups;
use crate::pg::errors;
use crate::pg::spi;
use crate::reads::groups as group_reads;
use crate::wire::datum::{JsonOut, JsonbArg};
use crate::wire::json::{check_name, Obj};

/// Every consumer group with, per queue, its cursors, lag (messages kept
/// past its cursors), `state` and subscription; the pops without a group
/// under `queueMode`.
#[pg_extern]
fn consumer_groups_list() -> JsonOut {
    JsonOut::of(&spi::spi(group_reads::list))
}

/// One group: its cursor, lease and lag on every partition it has read;
/// an unknown group is 42704.
#[pg_extern]
fn consumer_group_get(consumer_group: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    JsonOut::of(&spi::spi(|c| group_reads::get(c, group)))
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

/// Moves a group's cursors on every partition of a queue:
/// `{"position": "beginning" | "end"}`, `{"toEnd": true}` or `{"timestamp":
/// "<ISO 8601>"}` (the first message written at or after it). Open leases
/// are dropped, so the next pop reads from the new cursor. Answers
/// `{"success", "consumerGroup", "queue", "partitions" (how many moved),
/// "seekToEnd", "targetTimestamp"}`; an unknown queue is 42704.
#[pg_extern]
fn consumer_group_seek(
    consumer_group: &str,
    queue: &str,
    options: default!(Option<JsonbArg>, "'{}'"),
) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    let queue = check_name("queue", queue);
    let options: Value = options.map(|a| a.value("options")).unwrap_or(json!({}));
    let target = seek_target(&Obj::new(&options, "options"));
    JsonOut::of(&spi::spi(|c| {
        let qid = queues::require_id(c, queue);
        let moved = groups::seek_partitions(c, group, qid, None, target);
        let mut out = seek_answer(group, target);
        out["queue"] = json!(queue);
        out["partitions"] = json!(moved);
        out
    }))
}

/// Sets where a group starts on partitions it has not read yet:
/// `{"success", "consumerGroup", "queues"}` (the group's subscriptions
/// changed); a group with none is 42704, a timestamp that is not one 22023.
#[pg_extern]
fn consumer_group_subscription(consumer_group: &str, subscription_timestamp: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    check_timestamp("subscription_timestamp", subscription_timestamp);
    JsonOut::of(&spi::spi(|c| {
        groups::set_subscription(c, group, subscription_timestamp)
    }))
}

/// Deprecated (0.13.0; removed in 0.14.0): `consumer_groups_list`, whose
/// answer the front-end turns into Queen's. Every group on every queue as
/// Queen's server lists them: a bare array,
/// one element per (group, queue), queue mode included, with `state` and
/// the subscription.
#[pg_extern]
fn consumer_groups_summary() -> JsonOut {
    JsonOut::of(&spi::spi(group_reads::summary))
}

/// Deprecated (0.13.0; removed in 0.14.0): `consumer_group_get`, whose
/// answer the front-end turns into Queen's. One group as Queen's server
/// details it: an object keyed by queue name;
/// `{}` for an unknown group.
#[pg_extern]
fn consumer_group_detail(consumer_group: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    JsonOut::of(&spi::spi(|c| group_reads::detail(c, group)))
}

/// The cursors whose oldest unconsumed message is at least
/// `min_lag_seconds` old (default 3600, as Queen's server), most lagging
/// first: a bare array.
#[pg_extern]
fn consumer_groups_lagging(min_lag_seconds: default!(i64, 3600)) -> JsonOut {
    if min_lag_seconds < 0 {
        errors::invalid(
            "min_lag_seconds",
            format!("{min_lag_seconds} must not be negative"),
        );
    }
    JsonOut::of(&spi::spi(|c| group_reads::lagging(c, min_lag_seconds)))
}

/// Deprecated (0.12.0; removed in 0.14.0): `consumer_group_delete`, whose
/// answer the front-end turns into Queen's. Deletes a group's cursors (on
/// one queue, or everywhere) and with `delete_metadata` its subscription,
/// answered as Queen's server answers it (`deletedPartitions`,
/// `metadataDeleted`, `queueName`); an unknown queue deletes nothing and is
/// no error.
#[pg_extern]
fn consumer_group_drop(
    consumer_group: &str,
    queue: default!(Option<&str>, "NULL"),
    delete_metadata: default!(bool, true),
) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    let queue = queue.map(|q| check_name("queue", q));
    JsonOut::of(&spi::spi(|c| {
        let queue = queue.map(|q| (q, queues::find(c, q).map(|r| r.id)));
        groups::remove(c, group, queue, delete_metadata)
    }))
}

/// Deprecated (0.12.0; removed in 0.14.0): `consumer_group_subscription`,
/// whose answer the front-end turns into Queen's. Sets where a group starts
/// on partitions it has not read yet: `{"success", "consumerGroup",
/// "newTimestamp", "rowsUpdated"}`, also when no subscription of the group
/// was there to change.
#[pg_extern]
fn consumer_group_set_timestamp(consumer_group: &str, subscription_timestamp: &str) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    check_timestamp("subscription_timestamp", subscription_timestamp);
    JsonOut::of(&spi::spi(|c| {
        groups::set_timestamp(c, group, subscription_timestamp)
    }))
}

fn check_timestamp(field: &str, text: &str) {
    if text.is_empty() || crate::pg::time::timestamptz(text).is_none() {
        errors::invalid(field, format!("{text:?} is not a timestamp"));
    }
}

/// A seek body: `{"toEnd": true}`, `{"timestamp": "<ISO 8601>"}`, or
/// `{"position": "beginning" | "end"}`.
fn seek_target<'a>(o: &Obj<'a>) -> groups::SeekTarget<'a> {
    let timestamp = o.opt_str("timestamp").filter(|t| !t.is_empty());
    match (
        o.opt_bool("toEnd").unwrap_or(false),
        o.opt_str("position"),
        timestamp,
    ) {
        (true, None | Some("end"), None) | (false, Some("end"), None) => groups::SeekTarget::End,
        (false, Some("beginning"), None) => groups::SeekTarget::Beginning,
        (false, None, Some(t)) => {
            check_timestamp(&o.field("timestamp"), t);
            groups::SeekTarget::Timestamp(t)
        }
        (false, Some(p), None) => errors::invalid(
            &o.field("position"),
            format!("{p:?} is not one of beginning, end"),
        ),
        (false, None, None) => errors::invalid(&o.path, "Must specify toEnd=true or a timestamp"),
        _ => errors::invalid(&o.path, "give one of toEnd, timestamp or position"),
    }
}

fn seek_answer(group: &str, target: groups::SeekTarget<'_>) -> Value {
    json!({
        "success": true, "consumerGroup": group,
        "seekToEnd": target == groups::SeekTarget::End,
        "targetTimestamp": match target { groups::SeekTarget::Timestamp(t) => Some(t), _ => None },
    })
}

/// Deprecated (0.13.0; removed in 0.14.0): `consumer_group_seek`, whose
/// answer the front-end turns into Queen's. Moves a group's cursors on
/// every partition of a queue, answered as Queen's server answers it (`queueName`, `seekToEnd`, `targetTimestamp`,
/// `partitionsUpdated`). A queue that does not exist or has no partition is
/// an unknown object (42704).
#[pg_extern]
fn consumer_group_seek_queue(
    consumer_group: &str,
    queue: &str,
    options: default!(Option<JsonbArg>, "'{}'"),
) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    let queue = check_name("queue", queue);
    let options: Value = options.map(|a| a.value("options")).unwrap_or(json!({}));
    let target = seek_target(&Obj::new(&options, "options"));
    JsonOut::of(&spi::spi(|c| {
        let moved = queues::find(c, queue)
            .map(|q| groups::seek_partitions(c, group, q.id, None, target))
            .unwrap_or(0);
        if moved == 0 {
            errors::raise(
                "42704",
                format!("queue {queue:?}: Queue not found or has no partitions"),
            );
        }
        let mut out = seek_answer(group, target);
        out["queueName"] = json!(queue);
        out["partitionsUpdated"] = json!(moved);
        out
    }))
}

/// Moves a group's cursor on one partition; no options (NULL or `{}`)
/// means to the end. `partitionName` and `updated` as Queen's server
/// answers; an unknown queue or partition is 42704.
#[pg_extern]
fn consumer_group_seek_partition(
    consumer_group: &str,
    queue: &str,
    partition: &str,
    options: default!(Option<JsonbArg>, "NULL"),
) -> JsonOut {
    let group = check_name("consumer_group", consumer_group);
    let queue = check_name("queue", queue);
    let partition = check_name("partition", partition);
    let options: Value = options.map(|a| a.value("options")).unwrap_or(json!({}));
    let empty = options.as_object().is_some_and(|m| m.is_empty());
    let target = if empty {
        groups::SeekTarget::End
    } else {
        seek_target(&Obj::new(&options, "options"))
    };
    JsonOut::of(&spi::spi(|c| {
        let moved = queues::find(c, queue)
            .map(|q| groups::seek_partitions(c, group, q.id, Some(partition), target))
            .unwrap_or(0);
        if moved == 0 {
            errors::raise(
                "42704",
                format!("partition {partition:?} of queue {queue:?}: Partition not found"),
            );
        }
        let mut out = seek_answer(group, target);
        out["queueName"] = json!(queue);
        out["partitionName"] = json!(partition);
        out["updated"] = json!(true);
        out
    }))
}

/// Where a group reads: `{"consumerGroup", "entries"?: [{"queue",
/// "partition"? (Default)}]}` answers `{"consumerGroup", "entries":
/// [{"queue", "partition", "offset" (the next offset it reads, or null),
/// "metadata"}]}`, one per asked entry in order; without entries, every
/// position the group holds.
#[pg_extern]
fn consumer_group_positions(body: Option<JsonbArg>) -> JsonOut {
    let body: Value = body.map(|a| a.value("body")).unwrap_or(json!({}));
    let o = Obj::new(&body, "body");
    let group = o
        .opt_name("consumerGroup")
        .unwrap_or_else(|| errors::invalid(&o.field("consumerGroup"), "is required"));
    let asked: Option<Vec<(String, String)>> = o.opt_array("entries").map(|entries| {
        if entries.len() > group_reads::MAX_POSITION_ENTRIES {
            errors::program_limit(
                &o.field("entries"),
                format!(
                    "{} entries, at most {} may be asked",
                    entries.len(),
                    group_reads::MAX_POSITION_ENTRIES
                ),
            );
        }
        entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let eo = Obj::new(e, format!("{}[{i}]", o.field("entries")));
                let queue = eo.req_name("queue").to_owned();
                let partition = eo
                    .opt_str("partition")
                    .filter(|p| !p.is_empty())
                    .map(|p| check_name(&eo.field("partition"), p))
                    .unwrap_or(crate::wire::DEFAULT_PARTITION)
                    .to_owned();
                (queue, partition)
            })
            .collect()
    });
    JsonOut::of(&spi::spi(|c| {
        group_reads::positions(c, group, asked.as_deref())
    }))
}
