//! Consumer groups as an operator manages them: list, inspect, delete their
//! cursors, move them (seek), and change where a group starts.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::cursors;
use crate::catalog::ends;
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
    let moved = seek_cursors(
        c,
        [
            query!("consumer_group_seek_create"),
            query!("consumer_group_seek_move"),
            query!("cursor_rows/consumer_group_seek"),
        ],
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::TEXT],
        vec![qid.into(), group.into(), target.into(), timestamp.into()],
    );
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

/// The most cursors (and subscriptions) one read of the groups answers.
pub const MAX_GROUP_ROWS: i64 = 100_000;

/// A group whose oldest unconsumed message is older than this many seconds
/// is `Lagging` in the groups summary (Queen's server draws the line here).
pub const LAGGING_AFTER_SECONDS: f64 = 300.0;

/// The most entries one positions read may name.
pub const MAX_POSITION_ENTRIES: usize = 65_536;

/// One cursor of a group on a partition, with its lag.
struct Cursor {
    group: String,
    queue: String,
    partition: String,
    partition_id: i64,
    committed: i64,
    last_offset: i64,
    leased: bool,
    lag: i64,
    /// When the oldest message past the cursor was written (µs); None
    /// without lag.
    oldest_us: Option<i64>,
    lag_seconds: f64,
}

fn cursors(c: &mut SpiClient<'_>, group: Option<&str>) -> Vec<Cursor> {
    exec(
        c,
        query!("groups_cursors"),
        &[spi::TEXT, spi::INT8],
        &[group.into(), MAX_GROUP_ROWS.into()],
    )
    .map(|r| {
        let lag: i64 = spi::col(&r, "lag");
        Cursor {
            group: spi::col(&r, "consumer_group"),
            queue: spi::col(&r, "queue"),
            partition: spi::col(&r, "partition"),
            partition_id: spi::col(&r, "partition_id"),
            committed: spi::col(&r, "committed"),
            last_offset: spi::col(&r, "last_offset"),
            leased: spi::col(&r, "leased"),
            lag,
            oldest_us: spi::opt::<i64>(&r, "oldest_us").filter(|_| lag > 0),
            lag_seconds: if lag > 0 {
                spi::col::<f64>(&r, "lag_seconds").max(0.0)
            } else {
                0.0
            },
        }
    })
    .collect()
}

/// A group's subscription on one queue.
struct Subscription {
    group: String,
    queue: String,
    mode: String,
    from_us: Option<i64>,
    created_us: i64,
    conflation: bool,
}

fn subscriptions(c: &mut SpiClient<'_>, group: Option<&str>) -> Vec<Subscription> {
    exec(
        c,
        query!("groups_subscriptions"),
        &[spi::TEXT, spi::INT8],
        &[group.into(), MAX_GROUP_ROWS.into()],
    )
    .map(|r| Subscription {
        group: spi::col(&r, "consumer_group"),
        queue: spi::col(&r, "queue"),
        mode: spi::col(&r, "subscription_mode"),
        from_us: spi::opt(&r, "from_us"),
        created_us: spi::col(&r, "created_us"),
        conflation: spi::col(&r, "conflation"),
    })
    .collect()
}

/// Every group on every queue as Queen's server lists them: one element per
/// (group, queue), queue mode (`__QUEUE_MODE__`) included, with its cursors,
/// lag, `state` and subscription.
pub fn summary(c: &mut SpiClient<'_>) -> Value {
    use std::collections::BTreeMap;
    #[derive(Default)]
    struct Entry {
        cursors: i64,
        members: i64,
        with_lag: i64,
        total_lag: i64,
        max_time_lag: f64,
        consumed: bool,
        sub: Option<Subscription>,
    }
    let mut entries: BTreeMap<(String, String), Entry> = BTreeMap::new();
    for cur in cursors(c, None) {
        let e = entries.entry((cur.group, cur.queue)).or_default();
        e.cursors += 1;
        e.members += i64::from(cur.leased);
        e.with_lag += i64::from(cur.lag > 0);
        e.total_lag += cur.lag;
        e.max_time_lag = e.max_time_lag.max(cur.lag_seconds);
        e.consumed |= cur.committed >= 0;
    }
    for sub in subscriptions(c, None) {
        let key = (sub.group.clone(), sub.queue.clone());
        entries.entry(key).or_default().sub = Some(sub);
    }
    let iso = crate::pg::time::micros_to_iso;
    let out: Vec<Value> = entries
        .into_iter()
        .map(|((group, queue), e)| {
            let state = if e.max_time_lag > LAGGING_AFTER_SECONDS {
                "Lagging"
            } else if e.consumed {
                "Stable"
            } else {
                "Dead"
            };
            let mode = e.sub.as_ref().map(|s| s.mode.as_str());
            json!({
                "name": group, "topics": [queue], "queueName": queue, "members": e.members,
                "partitionCursors": e.cursors, "partitionsWithLag": e.with_lag,
                "totalLag": e.total_lag, "maxTimeLag": e.max_time_lag.floor() as i64,
                "state": state, "storage": "segments", "subscriptionMode": mode,
                "subscriptionTimestamp": e.sub.as_ref().and_then(|s| s.from_us).map(iso),
                "subscriptionCreatedAt": e.sub.as_ref().map(|s| iso(s.created_us)),
                "conflation": e.sub.as_ref().is_some_and(|s| s.conflation),
            })
        })
        .collect();
    Value::Array(out)
}

/// One group as Queen's server details it: an object keyed by queue name,
/// each with its partitions' lag; `{}` for a group with no cursor.
pub fn detail(c: &mut SpiClient<'_>, group: &str) -> Value {
    let conflating: Vec<String> = subscriptions(c, Some(group))
        .into_iter()
        .filter(|s| s.conflation)
        .map(|s| s.queue)
        .collect();
    let mut out = serde_json::Map::new();
    for cur in cursors(c, Some(group)) {
        let conflation = conflating.contains(&cur.queue);
        let queue = out
            .entry(cur.queue.clone())
            .or_insert_with(|| json!({"conflation": conflation, "partitions": []}));
        queue["partitions"].as_array_mut().unwrap().push(json!({
            "partition": cur.partition, "partitionId": cur.partition_id.to_string(),
            "workerId": null, "lastConsumedAt": null, "totalConsumed": (cur.committed + 1).max(0),
            "offsetLag": cur.lag, "timeLagSeconds": cur.lag_seconds.floor() as i64,
            "leaseActive": cur.leased, "committedOffset": cur.committed,
            "lastOffset": cur.last_offset,
        }));
    }
    Value::Object(out)
}

/// The cursors, of every group, whose oldest unconsumed message is at least
/// `min_lag_seconds` old, most lagging first.
pub fn lagging(c: &mut SpiClient<'_>, min_lag_seconds: i64) -> Value {
    let mut rows: Vec<Cursor> = cursors(c, None)
        .into_iter()
        .filter(|cur| cur.lag > 0 && cur.lag_seconds >= min_lag_seconds as f64)
        .collect();
    rows.sort_by(|a, b| b.lag_seconds.total_cmp(&a.lag_seconds));
    Value::Array(
        rows.into_iter()
            .map(|cur| {
                json!({
                    "consumer_group": cur.group, "queue_name": cur.queue,
                    "partition_name": cur.partition, "partition_id": cur.partition_id.to_string(),
                    "worker_id": null, "offset_lag": cur.lag,
                    "time_lag_seconds": cur.lag_seconds.floor() as i64,
                    "lag_hours": cur.lag_seconds / 3600.0,
                    "oldest_unconsumed_at": cur.oldest_us.map(crate::pg::time::micros_to_iso),
                    "last_consumed_at": null,
                })
            })
            .collect(),
    )
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

/// The next offset `group` reads on each asked (queue, partition), in
/// order; `offset` null where it holds no position. Without `asked`, every
/// position it holds.
pub fn positions(c: &mut SpiClient<'_>, group: &str, asked: Option<&[(String, String)]>) -> Value {
    let entries: Vec<Value> = match asked {
        Some(asked) => {
            let queues: Vec<String> = asked.iter().map(|(q, _)| q.clone()).collect();
            let partitions: Vec<String> = asked.iter().map(|(_, p)| p.clone()).collect();
            exec(
                c,
                query!("groups_positions"),
                &[spi::TEXT, spi::TEXT_ARRAY, spi::TEXT_ARRAY, spi::UUID],
                &[
                    group.into(),
                    queues.into(),
                    partitions.into(),
                    crate::catalog::queues::default_tenant().into(),
                ],
            )
            .map(|r| {
                position(
                    spi::col(&r, "queue"),
                    spi::col(&r, "partition"),
                    spi::opt(&r, "committed"),
                )
            })
            .collect()
        }
        None => cursors(c, Some(group))
            .into_iter()
            .map(|cur| position(cur.queue, cur.partition, Some(cur.committed)))
            .collect(),
    };
    json!({"consumerGroup": group, "entries": entries})
}

fn position(queue: String, partition: String, committed: Option<i64>) -> Value {
    match committed {
        Some(n) => json!({"queue": queue, "partition": partition, "offset": n + 1, "metadata": ""}),
        None => json!({"queue": queue, "partition": partition, "offset": null}),
    }
}
