//! Readers with no routing key: asked of every shard at once (`RUN ON
//! ALL`), their answers merged into the one answer a single database gives.

use std::collections::BTreeMap;

use pgrx::prelude::*;
use queen_datum::JsonOut;
use serde_json::{json, Map, Value};

use queen_datum::JsonbArg;

use crate::remote;

fn each(sql: &'static str) -> Vec<Value> {
    remote::all::<String>(sql, &[])
        .iter()
        .map(|a| remote::parse(sql, a))
        .collect()
}

/// Numbers added key by key (objects alike in shape).
fn add(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(Value::Object(a)), Value::Object(b)) => add(a, b),
            (Some(a @ Value::Number(_)), Value::Number(b)) => {
                *a = match (a.as_i64(), b.as_i64()) {
                    (Some(x), Some(y)) => Value::from(x + y),
                    _ => Value::from(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
                }
            }
            (None, v) => {
                into.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
}

/// Deprecated (0.12.0; removed in 0.14.0): `queues_list`.
#[pg_extern(volatile)]
fn list_queues() -> JsonOut {
    queues_list()
}

/// `queues_list()` as a proxy before 0.13.0 declares it (no arguments,
/// this symbol): every queue by name, read through the shards' list of
/// that version until the proxy is updated.
#[pg_extern(volatile, sql = false)]
fn queues_list() -> JsonOut {
    let updated = Spi::get_one::<bool>(
        "SELECT to_regprocedure('queen_remote.queues_list_all(jsonb)') IS NOT NULL",
    )
    .unwrap_or_else(|e| error!("{e}"))
    .unwrap_or(false);
    if updated {
        return queues_list_with_options(None);
    }
    let mut queues: Vec<Value> = Vec::new();
    let mut total = 0i64;
    for a in each("SELECT queen_remote.list_queues_all()::text") {
        total += a.get("total").and_then(Value::as_i64).unwrap_or(0);
        if let Some(Value::Array(q)) = a.get("queues") {
            queues.extend(q.iter().cloned());
        }
    }
    queues.sort_by_key(|q| by_text(q, "name"));
    JsonOut(json!({"queues": queues, "total": total}).to_string())
}

/// A page's `limit` or `offset` as a shard reads it (absent, null or empty:
/// none); Err for a value a shard refuses.
fn page_number(v: Option<&Value>) -> Result<Option<u64>, ()> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => s.parse().map(Some).map_err(|_| ()),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or(()),
        Some(_) => Err(()),
    }
}

/// The most rows one page of the queue list answers (as on a shard).
const PAGE_MAX: u64 = queen_datum::limits::LIST_PAGE_MAX as u64;

/// The queues of every shard matching `options` (its filters, `order` and
/// page), as one database lists them: each shard is asked for the first
/// offset + limit of its own (every one with no limit, or past a shard's
/// page bound), the rows put in the order asked (names byte by byte, as the
/// shards order them) and the page cut from them all, its limit bounded as
/// the shards bound theirs; `total` and the KV and timer rows added up.
///
/// Its symbol is new in 0.13.0 (a symbol keeps its arguments for ever).
#[pg_extern(volatile, name = "queues_list")]
fn queues_list_with_options(options: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let mut asked: Value = options
        .as_ref()
        .and_then(|a| serde_json::from_str(&a.0).ok())
        .unwrap_or_else(|| json!({}));
    // A value a shard refuses goes to it as it is, to be refused there.
    let page = match (
        page_number(asked.get("limit")),
        page_number(asked.get("offset")),
    ) {
        (Ok(limit), Ok(offset)) => Some((limit, offset.unwrap_or(0))),
        _ => None,
    };
    if let (Some((limit, offset)), Some(o)) = (page, asked.as_object_mut()) {
        o.insert("offset".into(), Value::from(0));
        // A shard answers at most PAGE_MAX rows a page: past that, every
        // row it has (at most its bound on a whole list).
        match limit.map(|l| l.min(PAGE_MAX) + offset) {
            Some(rows) if rows <= PAGE_MAX => o.insert("limit".into(), Value::from(rows)),
            _ => o.remove("limit"),
        };
    }
    let answers: Vec<Value> = remote::all::<String>(
        "SELECT queen_remote.queues_list_all($1::jsonb)::text",
        &[asked.to_string().into()],
    )
    .iter()
    .map(|a| remote::parse("queues_list", a))
    .collect();
    let (limit, offset) = page.unwrap_or((None, 0));
    // The merged page is bounded as a shard bounds its own.
    let limit = limit.map(|l| l.min(PAGE_MAX));
    let mut queues = concat(&answers, Some("queues"));
    match asked.get("order").and_then(Value::as_str) {
        Some("newest") => queues.sort_by_key(|q| std::cmp::Reverse(by_text(q, "createdAt"))),
        _ => queues.sort_by_key(|q| by_text(q, "name")),
    }
    let queues: Vec<Value> = queues
        .into_iter()
        .skip(offset as usize)
        .take(limit.map_or(usize::MAX, |l| l as usize))
        .collect();
    let mut out = Map::new();
    for key in ["total", "kvRows", "kvBytes", "timerRows", "timerBytes"] {
        let sum: i64 = answers.iter().filter_map(|a| a[key].as_i64()).sum();
        out.insert(key.into(), Value::from(sum));
    }
    out.insert("queues".into(), Value::Array(queues));
    out.insert(
        "pagination".into(),
        json!({"limit": limit, "offset": offset}),
    );
    JsonOut(Value::Object(out).to_string())
}

/// The overview of every shard, merged as [`overviews`] merges them.
#[pg_extern(volatile)]
fn overview() -> JsonOut {
    overviews("SELECT queen_remote.overview_all()::text")
}

pub(crate) fn by_text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

fn by_number(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// The elements of each shard's answer (the answer itself when it is an
/// array, else its array at `key`), put together.
pub(crate) fn concat(answers: &[Value], key: Option<&str>) -> Vec<Value> {
    answers
        .iter()
        .flat_map(|a| match key {
            Some(k) => a.get(k),
            None => Some(a),
        })
        .filter_map(Value::as_array)
        .flatten()
        .cloned()
        .collect()
}

/// Rows of every shard with the same `key` added up into one (numbers added
/// key by key), in the order of `key`.
fn grouped(rows: Vec<Value>, key: &str) -> Vec<Value> {
    let mut by: std::collections::BTreeMap<String, Map<String, Value>> = Default::default();
    for row in rows {
        if let Value::Object(o) = row {
            let k = o.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
            match by.get_mut(&k) {
                Some(into) => add(into, &o),
                None => {
                    by.insert(k, o);
                }
            }
        }
    }
    by.into_values().map(Value::Object).collect()
}

/// Deprecated (0.13.0; removed in 0.14.0): `queues_list`, whose answer the front-end turns into Queen's.
/// Every shard's queues, newest first, with the KV and timer figures added up.
#[pg_extern(volatile)]
fn resource_queues() -> JsonOut {
    let answers = each("SELECT queen_remote.resource_queues_all()::text");
    let mut queues = concat(&answers, Some("queues"));
    queues.sort_by_key(|q| std::cmp::Reverse(by_text(q, "createdAt")));
    let mut out = Map::new();
    for a in &answers {
        if let Value::Object(o) = a {
            let mut figures = o.clone();
            figures.remove("queues");
            add(&mut out, &figures);
        }
    }
    out.insert("queues".into(), Value::Array(queues));
    JsonOut(Value::Object(out).to_string())
}

/// Namespaces over every shard: a namespace's queues may live on several.
#[pg_extern(volatile)]
fn resource_namespaces() -> JsonOut {
    let answers = each("SELECT queen_remote.resource_namespaces_all()::text");
    let rows = grouped(concat(&answers, Some("namespaces")), "namespace");
    JsonOut(serde_json::json!({ "namespaces": rows }).to_string())
}

#[pg_extern(volatile)]
fn resource_tasks() -> JsonOut {
    let answers = each("SELECT queen_remote.resource_tasks_all()::text");
    let rows = grouped(concat(&answers, Some("tasks")), "task");
    JsonOut(serde_json::json!({ "tasks": rows }).to_string())
}

/// Every group, its queues on every shard put together; the pops without a
/// group on every shard's queues.
#[pg_extern(volatile)]
fn consumer_groups_list() -> JsonOut {
    let answers = each("SELECT queen_remote.consumer_groups_list_all()::text");
    let mut by: std::collections::BTreeMap<String, Value> = Default::default();
    for g in concat(&answers, Some("consumerGroups")) {
        let name = by_text(&g, "consumerGroup");
        match by.get_mut(&name) {
            Some(into) => {
                if let (Some(Value::Array(q)), Some(Value::Array(more))) =
                    (into.get_mut("queues"), g.get("queues"))
                {
                    q.extend(more.iter().cloned());
                }
            }
            None => {
                by.insert(name, g);
            }
        }
    }
    let total = by.len();
    let groups: Vec<Value> = by.into_values().collect();
    let mut queue_mode = concat(&answers, Some("queueMode"));
    queue_mode.sort_by_key(|q| by_text(q, "queue"));
    JsonOut(
        serde_json::json!({ "consumerGroups": groups, "total": total, "queueMode": queue_mode })
            .to_string(),
    )
}

/// One row per group and queue, by group then queue.
#[pg_extern(volatile)]
fn consumer_groups_summary() -> JsonOut {
    let mut rows = concat(
        &each("SELECT queen_remote.consumer_groups_summary_all()::text"),
        None,
    );
    rows.sort_by(|a, b| {
        (by_text(a, "name"), by_text(a, "queueName"))
            .cmp(&(by_text(b, "name"), by_text(b, "queueName")))
    });
    JsonOut(Value::Array(rows).to_string())
}

/// The most lagging cursors of every shard, most lagging first.
#[pg_extern(volatile)]
fn consumer_groups_lagging(min_lag_seconds: default!(i64, 3600)) -> JsonOut {
    let answers: Vec<Value> = remote::all::<String>(
        "SELECT queen_remote.consumer_groups_lagging_all($1)::text",
        &[min_lag_seconds.into()],
    )
    .iter()
    .map(|a| remote::parse("consumer_groups_lagging", a))
    .collect();
    let mut rows = concat(&answers, None);
    rows.sort_by(|a, b| {
        by_number(b, "time_lag_seconds").total_cmp(&by_number(a, "time_lag_seconds"))
    });
    JsonOut(Value::Array(rows).to_string())
}

/// A group's queues on every shard (queues are on one shard each).
#[pg_extern(volatile)]
fn consumer_group_detail(consumer_group: &str) -> JsonOut {
    let mut out = Map::new();
    for a in remote::all::<String>(
        "SELECT queen_remote.consumer_group_detail_all($1)::text",
        &[consumer_group.into()],
    ) {
        if let Value::Object(o) = remote::parse("consumer_group_detail", &a) {
            out.extend(o);
        }
    }
    JsonOut(Value::Object(out).to_string())
}

#[pg_extern(volatile)]
fn kv_namespaces() -> JsonOut {
    let mut rows = concat(&each("SELECT queen_remote.kv_namespaces_all()::text"), None);
    rows.sort_by_key(|r| by_text(r, "namespace"));
    JsonOut(Value::Array(rows).to_string())
}

/// A namespace's usage on its shard; every namespace's, over all shards.
#[pg_extern(volatile)]
fn kv_usage(ns: default!(Option<&str>, "NULL")) -> JsonOut {
    if let Some(ns) = ns {
        let shard = crate::route::Router::load().name(ns);
        return JsonOut(
            remote::one::<String>(
                "SELECT queen_remote.kv_usage($1, $2)::text",
                &[shard.into(), ns.into()],
            )
            .unwrap_or_else(|| "null".into()),
        );
    }
    let mut rows = concat(
        &each("SELECT queen_remote.kv_usage_all()::text"),
        Some("namespaces"),
    );
    rows.sort_by_key(|r| by_text(r, "ns"));
    JsonOut(serde_json::json!({ "namespaces": rows }).to_string())
}

/// Each shard's maintenance tasks, each marked with its shard.
#[pg_extern(volatile)]
fn maintenance_status() -> JsonOut {
    let mut rows = Vec::new();
    for shard in crate::route::Router::load().all() {
        let a = remote::one::<String>(
            "SELECT queen_remote.maintenance_status($1)::text",
            &[shard.into()],
        )
        .unwrap_or_else(|| "[]".into());
        for mut task in concat(&[remote::parse("maintenance_status", &a)], None) {
            if let Some(o) = task.as_object_mut() {
                o.insert("shard".into(), Value::from(shard));
            }
            rows.push(task);
        }
    }
    JsonOut(Value::Array(rows).to_string())
}

/// Table sizes added up over the shards, table by table.
#[pg_extern(volatile)]
fn table_sizes() -> JsonOut {
    let rows = grouped(
        concat(&each("SELECT queen_remote.table_sizes_all()::text"), None),
        "table",
    );
    JsonOut(Value::Array(rows).to_string())
}

/// Objects of every shard added up (numbers added, the rest the first
/// shard's).
pub(crate) fn summed(answers: Vec<Value>) -> Map<String, Value> {
    let mut sum = Map::new();
    for a in answers {
        if let Value::Object(o) = a {
            add(&mut sum, &o);
        }
    }
    sum
}

fn parsed(answers: Vec<String>, what: &str) -> Vec<Value> {
    answers.iter().map(|a| remote::parse(what, a)).collect()
}

/// A group deleted (`one`/`all`: the remote delete or drop) from a queue on
/// its shard, or from every queue of every shard; the counts added up.
fn group_removed(
    one: &'static str,
    all: &'static str,
    consumer_group: &str,
    queue: Option<&str>,
    delete_metadata: bool,
) -> JsonOut {
    if let Some(q) = queue {
        let shard = crate::route::Router::load().name(q);
        return JsonOut(
            remote::one::<String>(
                one,
                &[
                    shard.into(),
                    consumer_group.into(),
                    q.into(),
                    delete_metadata.into(),
                ],
            )
            .unwrap_or_else(|| "null".into()),
        );
    }
    let answers = remote::all::<String>(all, &[consumer_group.into(), delete_metadata.into()]);
    JsonOut(Value::Object(summed(parsed(answers, all))).to_string())
}

#[pg_extern(volatile)]
fn consumer_group_delete(
    consumer_group: &str,
    queue: default!(Option<&str>, "NULL"),
    delete_metadata: default!(bool, true),
) -> JsonOut {
    group_removed(
        "SELECT queen_remote.consumer_group_delete($1, $2, $3, $4)::text",
        "SELECT queen_remote.consumer_group_delete_all($1, NULL, $2)::text",
        consumer_group,
        queue,
        delete_metadata,
    )
}

#[pg_extern(volatile)]
fn consumer_group_drop(
    consumer_group: &str,
    queue: default!(Option<&str>, "NULL"),
    delete_metadata: default!(bool, true),
) -> JsonOut {
    group_removed(
        "SELECT queen_remote.consumer_group_drop($1, $2, $3, $4)::text",
        "SELECT queen_remote.consumer_group_drop_all($1, NULL, $2)::text",
        consumer_group,
        queue,
        delete_metadata,
    )
}

/// The partitions with the most pending, of a queue on its shard or of
/// every shard, most pending first, cut to the limit each shard applied.
#[pg_extern(volatile)]
fn partition_backlog(
    queue: default!(Option<&str>, "NULL"),
    max_rows: default!(Option<i64>, "NULL"),
) -> JsonOut {
    if let Some(q) = queue {
        let shard = crate::route::Router::load().name(q);
        return JsonOut(
            remote::one::<String>(
                "SELECT queen_remote.partition_backlog($1, $2, $3)::text",
                &[shard.into(), q.into(), max_rows.into()],
            )
            .unwrap_or_else(|| "null".into()),
        );
    }
    let answers = parsed(
        remote::all::<String>(
            "SELECT queen_remote.partition_backlog_all(NULL, $1)::text",
            &[max_rows.into()],
        ),
        "partition_backlog",
    );
    let limit = answers
        .first()
        .and_then(|a| a.get("limit"))
        .and_then(Value::as_u64)
        .unwrap_or(100);
    let mut rows = concat(&answers, Some("partitions"));
    rows.sort_by(|a, b| {
        by_number(b, "pending")
            .total_cmp(&by_number(a, "pending"))
            .then_with(|| {
                (by_text(a, "queue"), by_text(a, "partition"))
                    .cmp(&(by_text(b, "queue"), by_text(b, "partition")))
            })
    });
    rows.truncate(limit as usize);
    JsonOut(serde_json::json!({ "partitions": rows, "limit": limit }).to_string())
}

/// Dead letters of a queue on its shard; of every shard, newest failure
/// first, each shard asked for the first offset + limit and the page cut
/// from them all.
fn dead_letters(
    options: Option<JsonbArg>,
    one: &'static str,
    all: &'static str,
    what: &str,
) -> JsonOut {
    let mut o: Value = options
        .as_ref()
        .and_then(|a| serde_json::from_str(&a.0).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    if let Some(q) = o.get("queue").and_then(Value::as_str) {
        let shard = crate::route::Router::load().name(q);
        let text = options.map(|a| a.0);
        return JsonOut(
            remote::one::<String>(one, &[shard.into(), text.as_deref().into()])
                .unwrap_or_else(|| "null".into()),
        );
    }
    let limit = o.get("limit").and_then(Value::as_u64).unwrap_or(100);
    let offset = o.get("offset").and_then(Value::as_u64).unwrap_or(0);
    if let Some(m) = o.as_object_mut() {
        m.insert("limit".into(), Value::from(limit + offset));
        m.insert("offset".into(), Value::from(0));
    }
    let text = o.to_string();
    let texts = remote::all::<String>(all, &[text.as_str().into()]);
    // The dead letters stay as their texts (their payloads may be any JSON
    // a push took); the rest of each answer is read.
    let mut rows: Vec<(Vec<String>, &serde_json::value::RawValue)> = Vec::new();
    let mut answers: Vec<Value> = Vec::new();
    for t in &texts {
        let l = remote::listed(what, t, "messages", &["failedAt"]);
        rows.extend(l.rows);
        answers.push(Value::Object(l.rest));
    }
    rows.sort_by(|a, b| b.0.cmp(&a.0));
    let page: Vec<&serde_json::value::RawValue> = rows
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|(_, m)| m)
        .collect();
    let mut out = summed(answers);
    let shown = page.len();
    if out.contains_key("pagination") {
        out.insert(
            "pagination".into(),
            serde_json::json!({"limit": limit, "offset": offset}),
        );
        out.insert("total".into(), Value::from(shown));
    } else {
        out.insert("limit".into(), Value::from(limit));
        out.insert("offset".into(), Value::from(offset));
    }
    JsonOut(remote::with_rows(out, "messages", page))
}

#[pg_extern(volatile)]
fn dlq_list(options: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    dead_letters(
        options,
        "SELECT queen_remote.dlq_list($1, $2::jsonb)::text",
        "SELECT queen_remote.dlq_list_all($1::jsonb)::text",
        "dlq_list",
    )
}

#[pg_extern(volatile)]
fn dlq_messages(options: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    dead_letters(
        options,
        "SELECT queen_remote.dlq_messages($1, $2::jsonb)::text",
        "SELECT queen_remote.dlq_messages_all($1::jsonb)::text",
        "dlq_messages",
    )
}

/// The operator's switches: read on shard 0 (every shard is set alike),
/// set on every shard.
#[pg_extern(volatile)]
fn system_switches(surface: &str, changes: default!(Option<JsonbArg>, "NULL")) -> JsonOut {
    let changes = changes.map(|c| c.0);
    let Some(changes) = changes else {
        return JsonOut(
            remote::one::<String>(
                "SELECT queen_remote.system_switches($1, $2, NULL)::text",
                &[0.into(), surface.into()],
            )
            .unwrap_or_else(|| "null".into()),
        );
    };
    let answers = remote::all::<String>(
        "SELECT queen_remote.system_switches_all($1, $2::jsonb)::text",
        &[surface.into(), changes.as_str().into()],
    );
    JsonOut(answers.into_iter().next().unwrap_or_else(|| "null".into()))
}

#[pg_extern(volatile)]
fn ephemeral_queues() -> JsonOut {
    let answers = each("SELECT queen_remote.ephemeral_queues_all()::text");
    let queues = concat(&answers, Some("queues"));
    let mut out = summed(answers);
    out.insert("queues".into(), Value::Array(queues));
    JsonOut(Value::Object(out).to_string())
}

/// The request and message figures added up; the longest uptime.
#[pg_extern(volatile)]
fn metrics_summary() -> JsonOut {
    let answers = each("SELECT queen_remote.metrics_summary_all()::text");
    let uptime = answers
        .iter()
        .map(|a| by_number(a, "uptime"))
        .fold(0.0, f64::max);
    let mut out = summed(answers);
    out.insert("uptime".into(), serde_json::json!(uptime));
    JsonOut(Value::Object(out).to_string())
}

/// Deprecated (0.13.0; removed in 0.14.0): `overview`. The overview of
/// every shard in Queen's shape, merged as [`overviews`] merges them.
#[pg_extern(volatile)]
fn system_overview() -> JsonOut {
    overviews("SELECT queen_remote.system_overview_all()::text")
}

/// The overviews `each_call` answers, one per shard, as one: counts added
/// up; namespaces and tasks counted once over the shards; lag minimum and
/// maximum over the shards, its average and median weighted by each shard's
/// partitions (the median of the whole can not be had from the shards'
/// medians); the latest timestamp.
fn overviews(each_call: &'static str) -> JsonOut {
    let answers = each(each_call);
    let weights: Vec<f64> = answers.iter().map(|a| by_number(a, "partitions")).collect();
    let total_weight: f64 = weights.iter().sum();
    let mut out = summed(answers.clone());
    for kind in ["time", "offset"] {
        let stats: Vec<&Value> = answers
            .iter()
            .filter_map(|a| a.pointer(&format!("/lag/{kind}")))
            .collect();
        if stats.is_empty() {
            continue;
        }
        let min = stats
            .iter()
            .map(|s| by_number(s, "min"))
            .fold(f64::INFINITY, f64::min);
        let max = stats
            .iter()
            .map(|s| by_number(s, "max"))
            .fold(f64::NEG_INFINITY, f64::max);
        let weighted = |key: &str| {
            if total_weight == 0.0 {
                return stats.iter().map(|s| by_number(s, key)).sum::<f64>() / stats.len() as f64;
            }
            stats
                .iter()
                .zip(&weights)
                .map(|(s, w)| by_number(s, key) * w)
                .sum::<f64>()
                / total_weight
        };
        let merged = serde_json::json!({"avg": weighted("avg"), "median": weighted("median"), "min": min, "max": max});
        if let Some(Value::Object(lag)) = out.get_mut("lag") {
            lag.insert(kind.into(), merged);
        }
    }
    let namespaces = concat(
        &each("SELECT queen_remote.resource_namespaces_all()::text"),
        Some("namespaces"),
    );
    let tasks = concat(
        &each("SELECT queen_remote.resource_tasks_all()::text"),
        Some("tasks"),
    );
    out.insert(
        "namespaces".into(),
        Value::from(grouped(namespaces, "namespace").len()),
    );
    out.insert("tasks".into(), Value::from(grouped(tasks, "task").len()));
    let latest = |key: &str| {
        answers
            .iter()
            .map(|a| by_text(a, key))
            .max()
            .unwrap_or_default()
    };
    out.insert("timestamp".into(), Value::from(latest("timestamp")));
    JsonOut(Value::Object(out).to_string())
}

/// Objects of every shard folded key by key: `max*`/`*Max*` figures the
/// largest, `min*` the smallest, `avg*`/`*Avg*` the mean of the shards that
/// have them, other numbers added (whole numbers stay whole), texts
/// (timestamps, names a bucket shares) the greatest, flags true when any
/// shard's is; any other value the first shard's.
pub(crate) fn folded<'a>(answers: impl IntoIterator<Item = &'a Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for a in answers {
        let Some(o) = a.as_object() else { continue };
        for (k, v) in o {
            *seen.entry(k.clone()).or_default() += 1;
            let merged = match (out.get(k), v) {
                (None, _) => v.clone(),
                (Some(Value::Number(x)), Value::Number(y)) => combined(k, x, y),
                (Some(Value::String(x)), Value::String(y)) => Value::from(x.clone().max(y.clone())),
                (Some(Value::Bool(x)), Value::Bool(y)) => Value::from(*x || *y),
                (Some(old), _) => old.clone(),
            };
            out.insert(k.clone(), merged);
        }
    }
    for (k, n) in seen {
        if k.to_ascii_lowercase().starts_with("avg") || k.contains("Avg") {
            if let Some(x) = out.get(&k).and_then(Value::as_f64) {
                out.insert(k, json!(x / n as f64));
            }
        }
    }
    out
}

/// Two shards' figures named `key`: `max*`/`*Max*` the largest, `min*` the
/// smallest, others added; whole numbers stay whole.
fn combined(key: &str, x: &serde_json::Number, y: &serde_json::Number) -> Value {
    let lower = key.to_ascii_lowercase();
    let (ints, floats) = ((x.as_i64(), y.as_i64()), (x.as_f64(), y.as_f64()));
    let (fx, fy) = (floats.0.unwrap_or(0.0), floats.1.unwrap_or(0.0));
    if lower.starts_with("max") || key.contains("Max") {
        match ints {
            (Some(a), Some(b)) => Value::from(a.max(b)),
            _ => json!(fx.max(fy)),
        }
    } else if lower.starts_with("min") {
        match ints {
            (Some(a), Some(b)) => Value::from(a.min(b)),
            _ => json!(fx.min(fy)),
        }
    } else {
        match ints {
            (Some(a), Some(b)) => Value::from(a + b),
            _ => json!(fx + fy),
        }
    }
}

#[pg_extern(volatile)]
fn sweeper_metrics() -> JsonOut {
    JsonOut(
        Value::Object(folded(&each(
            "SELECT queen_remote.sweeper_metrics_all()::text",
        )))
        .to_string(),
    )
}

#[pg_extern(volatile)]
fn stats_refresh() -> JsonOut {
    JsonOut(
        Value::Object(folded(&each(
            "SELECT queen_remote.stats_refresh_all()::text",
        )))
        .to_string(),
    )
}

/// Retention's deletes per bucket and kind, added up over the shards.
#[pg_extern(volatile)]
fn retention_timeseries(
    since: pgrx::datum::TimestampWithTimeZone,
    bucket: default!(&str, "'hour'"),
) -> JsonOut {
    let answers = parsed(
        remote::all::<String>(
            "SELECT queen_remote.retention_timeseries_all($1, $2)::text",
            &[since.into(), bucket.into()],
        ),
        "retention_timeseries",
    );
    let mut by: std::collections::BTreeMap<(String, String), Map<String, Value>> =
        Default::default();
    for row in concat(&answers, None) {
        if let Value::Object(o) = row {
            let k = (
                o.get("bucket")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                o.get("retentionType")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            );
            match by.get_mut(&k) {
                Some(into) => add(into, &o),
                None => {
                    by.insert(k, o);
                }
            }
        }
    }
    JsonOut(Value::Array(by.into_values().map(Value::Object).collect()).to_string())
}

/// Timers set aside, of a queue on its shard or of every shard, the latest
/// failure first.
#[pg_extern(volatile)]
fn timers_set_aside(
    queue: default!(Option<&str>, "NULL"),
    max_rows: default!(i32, 100),
) -> JsonOut {
    if let Some(q) = queue {
        let shard = crate::route::Router::load().name(q);
        return JsonOut(
            remote::one::<String>(
                "SELECT queen_remote.timers_set_aside($1, $2, $3)::text",
                &[shard.into(), q.into(), max_rows.into()],
            )
            .unwrap_or_else(|| "null".into()),
        );
    }
    let answers = parsed(
        remote::all::<String>(
            "SELECT queen_remote.timers_set_aside_all(NULL, $1)::text",
            &[max_rows.into()],
        ),
        "timers_set_aside",
    );
    let mut rows = concat(&answers, Some("timers"));
    rows.sort_by_key(|r| std::cmp::Reverse(by_text(r, "failedAt")));
    rows.truncate(max_rows.max(0) as usize);
    JsonOut(serde_json::json!({ "timers": rows }).to_string())
}

/// A group's subscription time set on every queue of every shard.
#[pg_extern(volatile)]
fn consumer_group_set_timestamp(consumer_group: &str, subscription_timestamp: &str) -> JsonOut {
    let answers = remote::all::<String>(
        "SELECT queen_remote.consumer_group_set_timestamp_all($1, $2)::text",
        &[consumer_group.into(), subscription_timestamp.into()],
    );
    JsonOut(Value::Object(summed(parsed(answers, "consumer_group_set_timestamp"))).to_string())
}
