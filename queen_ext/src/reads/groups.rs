//! Consumer groups as they are read: every group with its lag, one group's
//! cursors and leases, Queen's summary and detail, the lagging cursors, and
//! where a group reads.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::QUEUE_MODE;

/// Every consumer group with, per queue, its cursors, lag, `state` and
/// subscription (`consumerGroups`, by group then queue, and `total`, the
/// number of groups); the pops without a group (queue mode) per queue
/// under `queueMode`. At most [`MAX_GROUP_ROWS`] (group, queue) rows.
pub fn list(c: &mut SpiClient<'_>) -> Value {
    let mut groups: Vec<Value> = Vec::new();
    let mut queue_mode: Vec<Value> = Vec::new();
    let rows = exec(
        c,
        query!("consumer_groups_list"),
        &[spi::INT8],
        &[MAX_GROUP_ROWS.into()],
    );
    for r in rows {
        let group: String = spi::col(&r, "consumer_group");
        let entry = queue_entry(&r);
        match groups.last_mut() {
            _ if group == QUEUE_MODE => queue_mode.push(entry),
            Some(g) if g["consumerGroup"] == group.as_str() => {
                g["queues"].as_array_mut().unwrap().push(entry)
            }
            _ => groups.push(json!({"consumerGroup": group, "queues": [entry]})),
        }
    }
    json!({"consumerGroups": groups, "total": groups.len(), "queueMode": queue_mode})
}

/// One (group, queue) row of [`list`].
fn queue_entry(r: &pgrx::spi::SpiHeapTupleData<'_>) -> Value {
    let max_lag: f64 = spi::col(r, "max_lag_seconds");
    let state = if max_lag > LAGGING_AFTER_SECONDS {
        "Lagging"
    } else if spi::col::<bool>(r, "consumed") {
        "Stable"
    } else {
        "Dead"
    };
    let iso = crate::pg::time::micros_to_iso;
    json!({
        "queue": spi::col::<String>(r, "queue"), "partitions": spi::col::<i64>(r, "partitions"),
        "lag": spi::col::<i64>(r, "lag"), "partitionsWithLag": spi::col::<i64>(r, "with_lag"),
        "members": spi::col::<i64>(r, "members"), "maxTimeLag": max_lag.floor() as i64,
        "state": state, "subscriptionMode": spi::opt::<String>(r, "subscription_mode"),
        "subscriptionTimestamp": spi::opt::<i64>(r, "from_us").map(iso),
        "subscriptionCreatedAt": spi::opt::<i64>(r, "created_us").map(iso),
        "conflation": spi::col::<bool>(r, "conflation"),
    })
}

/// One group: its cursor and lease on every partition it has read, each
/// with its lag, how old the oldest message past it is, and whether its
/// queue's subscription conflates. An unknown group is 42704.
pub fn get(c: &mut SpiClient<'_>, group: &str) -> Value {
    let conflating: Vec<String> = subscriptions(c, Some(group))
        .into_iter()
        .filter(|s| s.conflation)
        .map(|s| s.queue)
        .collect();
    let rows: Vec<Value> = cursors(c, Some(group))
        .into_iter()
        .map(|cur| {
            json!({"queue": cur.queue, "partition": cur.partition,
                   "partitionId": cur.partition_id.to_string(), "committedOffset": cur.committed,
                   "lastOffset": cur.last_offset, "lag": cur.lag, "leased": cur.leased,
                   "timeLagSeconds": cur.lag_seconds.floor() as i64,
                   "conflation": conflating.contains(&cur.queue)})
        })
        .collect();
    if rows.is_empty() {
        errors::undefined("consumer group", group);
    }
    json!({"consumerGroup": group, "partitions": rows})
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

/// Deprecated with `consumer_groups_summary` (the front-end builds this
/// from [`list`]). Every group on every queue as Queen's server lists them: one element per
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

/// Deprecated with `consumer_group_detail` (the front-end builds this from
/// [`get`]). One group as Queen's server details it: an object keyed by queue name,
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
