//! The status and analytics readers (a `params` object each), and the
//! readers of messages and traces, through the proxy: a reader filtered to
//! one queue runs on its shard; otherwise every shard is asked at once and
//! the answers merged, time series bucket by bucket.

use std::collections::BTreeMap;

use pgrx::prelude::*;
use queen_datum::{JsonOut, JsonbArg};
use serde_json::{json, Map, Value};

use crate::errors;
use crate::global::{by_text as text, concat, folded, summed};
use crate::remote;
use crate::route::Router;

/// Rows of every shard grouped by `key` (a bucket's time) and folded, in
/// the order of `key`.
fn buckets(rows: Vec<Value>, key: &str) -> Vec<Value> {
    let mut by: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in rows {
        by.entry(text(&r, key)).or_default().push(r);
    }
    by.values().map(|rs| Value::Object(folded(rs))).collect()
}

/// The reader's answer on the shard of `params.queue`, or every shard's.
enum Answers {
    One(String),
    All(Vec<Value>),
}

fn read(
    params: &Option<JsonbArg>,
    one: &'static str,
    all: &'static str,
    by_queue: bool,
) -> Answers {
    let text = params.as_ref().map(|p| p.0.clone());
    let value: Value = text
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    if by_queue {
        if let Some(q) = value.get("queue").and_then(Value::as_str) {
            let shard = Router::load().name(q);
            return Answers::One(
                remote::one::<String>(one, &[shard.into(), text.as_deref().into()])
                    .unwrap_or_else(|| "null".into()),
            );
        }
    }
    Answers::All(
        remote::all::<String>(all, &[text.as_deref().into()])
            .iter()
            .map(|a| remote::parse(all, a))
            .collect(),
    )
}

fn first(answers: &[Value]) -> Map<String, Value> {
    answers
        .first()
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn answer(r: Answers, merge: impl FnOnce(Vec<Value>) -> Value) -> JsonOut {
    match r {
        Answers::One(a) => JsonOut(a),
        Answers::All(all) => JsonOut(merge(all).to_string()),
    }
}

/// Deprecated (0.13.0; removed in 0.14.0): `queues_list`, whose answer the front-end turns into Queen's.
/// The queues of every shard, newest first, paged after merging (each shard
/// is asked for the first offset + limit).
#[pg_extern(volatile)]
fn status_queues(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let mut p: Value = params
        .as_ref()
        .and_then(|a| serde_json::from_str(&a.0).ok())
        .unwrap_or_else(|| json!({}));
    let limit = p
        .get("limit")
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
        .unwrap_or(100);
    let offset = p
        .get("offset")
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
        .unwrap_or(0);
    if p.get("queue").is_none() {
        if let Some(o) = p.as_object_mut() {
            o.insert("limit".into(), Value::from(limit + offset));
            o.insert("offset".into(), Value::from(0));
        }
    }
    let params = Some(JsonbArg(p.to_string()));
    answer(
        read(
            &params,
            "SELECT queen_remote.status_queues($1, $2::jsonb)::text",
            "SELECT queen_remote.status_queues_all($1::jsonb)::text",
            true,
        ),
        |all| {
            let mut queues = concat(&all, Some("queues"));
            queues.sort_by_key(|q| std::cmp::Reverse(text(q, "createdAt")));
            let page: Vec<Value> = queues
                .into_iter()
                .skip(offset as usize)
                .take(limit as usize)
                .collect();
            json!({"queues": page, "pagination": {"limit": limit, "offset": offset}})
        },
    )
}

#[pg_extern(volatile)]
fn status_analytics(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    answer(
        read(
            &params,
            "SELECT queen_remote.status_analytics($1, $2::jsonb)::text",
            "SELECT queen_remote.status_analytics_all($1::jsonb)::text",
            true,
        ),
        |all| {
            let mut out = first(&all);
            out.insert(
                "dataPoints".into(),
                Value::Array(buckets(concat(&all, Some("dataPoints")), "timestamp")),
            );
            Value::Object(out)
        },
    )
}

#[pg_extern(volatile)]
fn queue_lag(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    answer(
        read(
            &params,
            "SELECT queen_remote.queue_lag($1, $2::jsonb)::text",
            "SELECT queen_remote.queue_lag_all($1::jsonb)::text",
            true,
        ),
        |all| {
            let mut rows: Vec<Value> = all
                .iter()
                .filter_map(Value::as_array)
                .flatten()
                .cloned()
                .collect();
            rows.sort_by_key(|r| std::cmp::Reverse(text(r, "bucketTime")));
            Value::Array(rows)
        },
    )
}

#[pg_extern(volatile)]
fn queue_ops(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    answer(
        read(
            &params,
            "SELECT queen_remote.queue_ops($1, $2::jsonb)::text",
            "SELECT queen_remote.queue_ops_all($1::jsonb)::text",
            true,
        ),
        |all| {
            let mut out = first(&all);
            let mut queues: Vec<String> = concat(&all, Some("queues"))
                .iter()
                .filter_map(|q| q.as_str().map(str::to_owned))
                .collect();
            queues.sort();
            queues.dedup();
            out.insert("series".into(), Value::Array(concat(&all, Some("series"))));
            out.insert("queues".into(), json!(queues));
            Value::Object(out)
        },
    )
}

#[pg_extern(volatile)]
fn retention_series(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    answer(
        read(
            &params,
            "SELECT queen_remote.retention_series($1, $2::jsonb)::text",
            "SELECT queen_remote.retention_series_all($1::jsonb)::text",
            true,
        ),
        |all| {
            let mut out = first(&all);
            out.insert(
                "series".into(),
                Value::Array(buckets(concat(&all, Some("series")), "bucket")),
            );
            out.insert("totals".into(), added(&all, "totals"));
            Value::Object(out)
        },
    )
}

/// Each shard's database samples: every shard is a server of its own.
#[pg_extern(volatile)]
fn system_metrics_series(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    answer(
        read(
            &params,
            "",
            "SELECT queen_remote.system_metrics_series_all($1::jsonb)::text",
            false,
        ),
        |all| {
            let mut out = first(&all);
            let sum = |key: &str| {
                all.iter()
                    .map(|a| a.get(key).and_then(Value::as_i64).unwrap_or(0))
                    .sum::<i64>()
            };
            out.insert(
                "replicas".into(),
                Value::Array(concat(&all, Some("replicas"))),
            );
            out.insert("replicaCount".into(), Value::from(sum("replicaCount")));
            out.insert("pointCount".into(), Value::from(sum("pointCount")));
            Value::Object(out)
        },
    )
}

#[pg_extern(volatile)]
fn worker_metrics_series(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    answer(
        read(
            &params,
            "",
            "SELECT queen_remote.worker_metrics_series_all($1::jsonb)::text",
            false,
        ),
        |all| {
            let mut out = first(&all);
            let series = buckets(concat(&all, Some("timeSeries")), "timestamp");
            out.insert("pointCount".into(), Value::from(series.len()));
            out.insert("timeSeries".into(), Value::Array(series));
            out.insert(
                "workers".into(),
                Value::Array(concat(&all, Some("workers"))),
            );
            out.insert("queues".into(), Value::Array(concat(&all, Some("queues"))));
            out.insert("summary".into(), added(&all, "summary"));
            Value::Object(out)
        },
    )
}

/// The status of every shard: its throughput bucket by bucket, its queues
/// and workers put together, its counts added up, the top errors merged.
#[pg_extern(volatile)]
fn status(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    answer(
        read(
            &params,
            "",
            "SELECT queen_remote.status_all($1::jsonb)::text",
            false,
        ),
        |all| {
            let mut out = first(&all);
            let series = buckets(concat(&all, Some("throughput")), "timestamp");
            out.insert("pointCount".into(), Value::from(series.len()));
            out.insert("throughput".into(), Value::Array(series));
            out.insert("queues".into(), Value::Array(concat(&all, Some("queues"))));
            out.insert(
                "workers".into(),
                Value::Array(concat(&all, Some("workers"))),
            );
            for key in ["leases", "errors"] {
                out.insert(key.into(), added(&all, key));
            }
            // Ratios are not added: each is the shards' weighted by their requests.
            let mut messages = added(&all, "messages");
            if let Some(m) = messages.as_object_mut() {
                m.insert(
                    "batchEfficiency".into(),
                    Value::Object(batch_efficiency(&all)),
                );
            }
            out.insert("messages".into(), messages);
            let mut dlq = added(&all, "deadLetterQueue");
            if let Some(d) = dlq.as_object_mut() {
                d.insert("topErrors".into(), top_errors(&all));
            }
            out.insert("deadLetterQueue".into(), dlq);
            Value::Object(out)
        },
    )
}

/// The batch efficiency of each kind of request over every shard: the
/// shards' weighted by their requests.
fn batch_efficiency(all: &[Value]) -> Map<String, Value> {
    let mut efficiency = Map::new();
    for kind in ["push", "pop", "ack"] {
        let (mut num, mut den) = (0.0, 0.0);
        for a in all {
            let r = a
                .pointer(&format!("/messages/requests/{kind}"))
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let e = a
                .pointer(&format!("/messages/batchEfficiency/{kind}"))
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            num += r * e;
            den += r;
        }
        efficiency.insert(kind.into(), json!(if den > 0.0 { num / den } else { 0.0 }));
    }
    efficiency
}

/// The top errors of every shard's dead-letter queue merged: the counts of
/// one error added, the most first, as many as the longest list (one at
/// least).
fn top_errors(all: &[Value]) -> Value {
    let mut errors: BTreeMap<String, i64> = BTreeMap::new();
    for e in all
        .iter()
        .filter_map(|a| a.pointer("/deadLetterQueue/topErrors"))
        .filter_map(Value::as_array)
        .flatten()
    {
        *errors.entry(text(e, "error")).or_default() +=
            e.get("count").and_then(Value::as_i64).unwrap_or(0);
    }
    let mut top: Vec<(String, i64)> = errors.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let shown = all
        .iter()
        .filter_map(|a| {
            a.pointer("/deadLetterQueue/topErrors")
                .and_then(Value::as_array)
                .map(Vec::len)
        })
        .max()
        .unwrap_or(0);
    top.truncate(shown.max(1));
    json!(top
        .iter()
        .map(|(e, c)| json!({"error": e, "count": c}))
        .collect::<Vec<_>>())
}

/// Messages of a queue on its shard; of every shard, newest first, the
/// first page only: a cursor names a partition of one shard, so paging on
/// is by queue.
#[pg_extern(volatile)]
fn messages_list(filters: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let value: Value = filters
        .as_ref()
        .and_then(|a| serde_json::from_str(&a.0).ok())
        .unwrap_or_else(|| json!({}));
    if value.get("queue").is_none() && value.get("cursor").is_some_and(|c| !c.is_null()) {
        errors::raise(
            "22023",
            "filters.cursor: pages on through the proxy only with filters.queue",
        );
    }
    let limit = value.get("limit").and_then(Value::as_u64).unwrap_or(50);
    if let Some(q) = value.get("queue").and_then(Value::as_str) {
        let shard = Router::load().name(q);
        let text = filters.as_ref().map(|p| p.0.clone());
        return JsonOut(
            remote::one::<String>(
                "SELECT queen_remote.messages_list($1, $2::jsonb)::text",
                &[shard.into(), text.as_deref().into()],
            )
            .unwrap_or_else(|| "null".into()),
        );
    }
    // Every shard's first page, the messages kept as their texts (a payload
    // may be any JSON a push took).
    const ALL: &str = "SELECT queen_remote.messages_list_all($1::jsonb)::text";
    let text = filters.as_ref().map(|p| p.0.clone());
    let texts = remote::all::<String>(ALL, &[text.as_deref().into()]);
    let all: Vec<remote::Listed<'_>> = texts
        .iter()
        .map(|t| remote::listed("messages_list", t, "messages", &["createdAt"]))
        .collect();
    let more = all
        .iter()
        .any(|a| a.rest.get("hasMore") == Some(&Value::Bool(true)));
    let total: i64 = all
        .iter()
        .map(|a| a.rest.get("total").and_then(Value::as_i64).unwrap_or(0))
        .sum();
    let mut out = all.first().map(|a| a.rest.clone()).unwrap_or_default();
    let mut rows: Vec<(Vec<String>, &serde_json::value::RawValue)> =
        all.into_iter().flat_map(|a| a.rows).collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0));
    let more = more || rows.len() as u64 > limit;
    rows.truncate(limit as usize);
    out.insert("hasMore".into(), Value::Bool(more));
    out.insert("cursor".into(), Value::Null);
    out.insert("total".into(), Value::from(total));
    JsonOut(remote::with_rows(
        out,
        "messages",
        rows.into_iter().map(|(_, m)| m).collect(),
    ))
}

/// Trace names of every shard (a name may be on several): counts added, the
/// latest sighting, most recent first; paged after merging.
#[pg_extern(volatile)]
fn trace_names(
    row_limit: default!(Option<i32>, "NULL"),
    row_offset: default!(Option<i32>, "NULL"),
) -> JsonOut {
    let limit = row_limit.unwrap_or(100).max(0);
    let offset = row_offset.unwrap_or(0).max(0);
    let all: Vec<Value> = remote::all::<String>(
        "SELECT queen_remote.trace_names_all($1, 0)::text",
        &[(limit + offset).into()],
    )
    .iter()
    .map(|a| remote::parse("trace_names", a))
    .collect();
    let mut by: BTreeMap<String, Value> = BTreeMap::new();
    for row in concat(&all, Some("trace_names")) {
        let name = text(&row, "trace_name");
        match by.get_mut(&name) {
            None => {
                by.insert(name, row);
            }
            Some(into) => {
                for k in ["trace_count", "message_count"] {
                    let sum = into.get(k).and_then(Value::as_i64).unwrap_or(0)
                        + row.get(k).and_then(Value::as_i64).unwrap_or(0);
                    into[k] = Value::from(sum);
                }
                if text(&row, "last_seen") > text(into, "last_seen") {
                    into["last_seen"] = row["last_seen"].clone();
                }
            }
        }
    }
    let total = by.len();
    let mut rows: Vec<Value> = by.into_values().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(text(r, "last_seen")));
    let page: Vec<Value> = rows
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .collect();
    JsonOut(json!({"trace_names": page, "total": total, "pagination": {"limit": limit, "offset": offset}}).to_string())
}

/// Traces of one name on every shard, oldest first; paged after merging.
#[pg_extern(volatile)]
fn traces_by_name(
    name: &str,
    row_limit: default!(Option<i32>, "NULL"),
    row_offset: default!(Option<i32>, "NULL"),
) -> JsonOut {
    let limit = row_limit.unwrap_or(100).max(0);
    let offset = row_offset.unwrap_or(0).max(0);
    // Every shard's first pages, each trace kept as its text (its data may
    // nest deeper than a value tree holds).
    let texts = remote::all::<String>(
        "SELECT queen_remote.traces_by_name_all($1, $2, 0)::text",
        &[name.into(), (limit + offset).into()],
    );
    let all: Vec<remote::Listed<'_>> = texts
        .iter()
        .map(|t| remote::listed("traces_by_name", t, "traces", &["created_at", "id"]))
        .collect();
    let total: i64 = all
        .iter()
        .map(|a| a.rest.get("total").and_then(Value::as_i64).unwrap_or(0))
        .sum();
    let mut rows: Vec<(Vec<String>, &serde_json::value::RawValue)> =
        all.into_iter().flat_map(|a| a.rows).collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let page: Vec<&serde_json::value::RawValue> = rows
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|(_, t)| t)
        .collect();
    let mut out = serde_json::Map::new();
    out.insert("total".into(), Value::from(total));
    out.insert(
        "pagination".into(),
        json!({"limit": limit, "offset": offset}),
    );
    JsonOut(remote::with_rows(out, "traces", page))
}

/// The answers of every shard to a call about one consumer group, asked one
/// shard after the other: a shard where the group has nothing answers
/// 42704, which only counts when every shard does.
fn each_shard_knowing(sql: &'static str, args: &[&str]) -> Vec<Value> {
    let mut found = Vec::new();
    let mut unknown = None;
    for shard in Router::load().all() {
        let mut call: Vec<pgrx::datum::DatumWithOid<'_>> = vec![shard.into()];
        call.extend(args.iter().map(|a| (*a).into()));
        match remote::try_one::<String>(sql, &call) {
            Ok(a) => found.push(remote::parse(sql, &a.unwrap_or_else(|| "null".into()))),
            Err(e) if e.sqlstate == "42704" => unknown = Some(e),
            Err(e) => errors::reraise(&e),
        }
    }
    if found.is_empty() {
        if let Some(e) = unknown {
            errors::reraise(&e);
        }
    }
    found
}

#[pg_extern(volatile)]
fn consumer_group_get(consumer_group: &str) -> JsonOut {
    let all = each_shard_knowing(
        "SELECT queen_remote.consumer_group_get($1, $2)::text",
        &[consumer_group],
    );
    let mut out = first(&all);
    out.insert(
        "partitions".into(),
        Value::Array(concat(&all, Some("partitions"))),
    );
    JsonOut(Value::Object(out).to_string())
}

#[pg_extern(volatile)]
fn consumer_group_subscription(consumer_group: &str, subscription_timestamp: &str) -> JsonOut {
    let all = each_shard_knowing(
        "SELECT queen_remote.consumer_group_subscription($1, $2, $3)::text",
        &[consumer_group, subscription_timestamp],
    );
    let mut out = first(&all);
    let queues: i64 = all
        .iter()
        .map(|a| a.get("queues").and_then(Value::as_i64).unwrap_or(0))
        .sum();
    out.insert("queues".into(), Value::from(queues));
    JsonOut(Value::Object(out).to_string())
}

/// The objects at `key` of every shard's answer added up (nested objects
/// too; numbers added, the rest the first shard's).
fn added(answers: &[Value], key: &str) -> Value {
    Value::Object(summed(
        answers.iter().filter_map(|a| a.get(key)).cloned().collect(),
    ))
}
