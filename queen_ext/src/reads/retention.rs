//! Answers "why is my disk not shrinking": per partition, the cutoffs, where
//! each rule would put the boundary, what the next cycle would delete, and
//! what pins the rest. Plus the readers of the retention time series and of
//! the schema's table sizes.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::queues;
use crate::maintenance::retention::cycle::DLQ_PHASE;
use crate::maintenance::retention::step::slowest_group;
use crate::maintenance::retention::work_list::{rules_sql, Rule};
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::pg::time::{micros_to_iso, PG_EPOCH_OFFSET_US};
use crate::query;

fn ts_json(t: Option<TimestampWithTimeZone>) -> Value {
    t.map_or(Value::Null, |t| {
        Value::String(micros_to_iso(t.into_inner() + PG_EPOCH_OFFSET_US))
    })
}

pub fn explain(client: &mut SpiClient<'_>, queue: &str, max_partitions: i32) -> Value {
    let Some(q) = queues::find(client, queue) else {
        errors::undefined("queue", queue)
    };
    let rule_sql = format!(
        "SELECT {} FROM queen.queues q CROSS JOIN (SELECT now() AS now) c WHERE q.id = $1",
        rules_sql()
    );
    let rule = {
        let row = client
            .update(rule_sql.as_str(), None, &[q.id.into()])
            .unwrap_or_else(|e| panic!("{e}"))
            .next()
            .expect("queue row");
        Rule::from_row(&row)
    };
    let parts: Vec<Span> = exec(
        client,
        query!("retention_explain_partitions"),
        &[spi::INT8, spi::INT8],
        &[q.id.into(), (max_partitions as i64).into()],
    )
    .map(|r| Span {
        pid: spi::col(&r, "id"),
        name: spi::col(&r, "name"),
        log_start: spi::col(&r, "log_start"),
        last_offset: spi::col(&r, "last_offset"),
    })
    .collect();
    let mut out = Vec::new();
    for p in parts {
        out.push(partition(client, &rule, p));
    }
    json!({
        "queue": queue,
        "cutoffs": {
            "retention": ts_json(rule.all_cutoff),
            "completedRetention": ts_json(rule.completed_cutoff),
            "transactionIds": ts_json(rule.txn_cutoff),
            "maxWait": ts_json(rule.max_wait_cutoff),
            "deadLetters": ts_json(rule.dlq_cutoff),
        },
        "partitions": out,
    })
}

/// A partition's id, name, first offset kept and last offset written.
struct Span {
    pid: i64,
    name: String,
    log_start: i64,
    last_offset: i64,
}

/// One partition's answer: where each rule puts the boundary, what the next
/// cycle would delete, and what pins the rest.
fn partition(client: &mut SpiClient<'_>, rule: &Rule, p: Span) -> Value {
    let Boundaries {
        rule1,
        rule2,
        max_wait,
        slowest,
        mut pins,
    } = boundaries(client, rule, &p);
    let boundary = [Some(p.log_start), rule1, rule2, max_wait]
        .into_iter()
        .flatten()
        .max()
        .unwrap();
    let deletable = exec(
        client,
        query!("retention_explain_deletable"),
        &[spi::INT8, spi::INT8, spi::INT8],
        &[p.pid.into(), p.log_start.into(), boundary.into()],
    )
    .next()
    .unwrap();
    let (segments, messages): (i64, i64) = (
        spi::col(&deletable, "segments"),
        spi::col(&deletable, "messages"),
    );
    if boundary > p.log_start && segments == 0 {
        pins.push(format!("the segment holding offset {boundary} is not wholly below the boundary; it goes when all of it is"));
    }
    let failing = failures(client, p.pid, &mut pins);
    json!({
        "partition": p.name,
        "partitionId": p.pid.to_string(),
        "logStart": p.log_start,
        "lastOffset": p.last_offset,
        "rule1Boundary": rule1,
        "rule2Boundary": rule2,
        "maxWaitBoundary": max_wait,
        "boundary": boundary,
        "nextCycleDeletes": {"segments": segments, "messages": messages},
        "slowestGroup": slowest.map(|(g, next)| json!({"consumerGroup": g, "nextOffset": next})),
        "pinnedBy": pins,
        "failing": failing,
    })
}

/// Where each rule puts a partition's boundary, the consumer group furthest
/// behind on it with its next offset, and what pins them.
struct Boundaries {
    rule1: Option<i64>,
    rule2: Option<i64>,
    max_wait: Option<i64>,
    slowest: Option<(String, i64)>,
    pins: Vec<String>,
}

/// The boundaries of partition `p` under `rule`.
fn boundaries(client: &mut SpiClient<'_>, rule: &Rule, p: &Span) -> Boundaries {
    let mut pins: Vec<String> = Vec::new();
    let boundary_for = |client: &mut SpiClient<'_>, cutoff: TimestampWithTimeZone| {
        fresh_boundary(client, p.pid, p.log_start, cutoff).unwrap_or(p.last_offset + 1)
    };
    let rule1 = rule.all_cutoff.map(|c| boundary_for(client, c));
    let slowest = slowest_group(client, p.pid);
    let rule2 = rule.completed_cutoff.and_then(|c| {
        let (group, cap) = slowest.clone()?;
        let time = boundary_for(client, c);
        if cap < time {
            pins.push(format!(
                "consumer group {group:?} has consumed up to offset {} and caps rule 2",
                cap - 1
            ));
        }
        Some(time.min(cap))
    });
    let max_wait = rule.max_wait_cutoff.map(|c| boundary_for(client, c));
    if rule.all_cutoff.is_none() && rule.completed_cutoff.is_none() {
        pins.push(
            "retention is off for this queue (retentionEnabled with a positive window turns it on)"
                .into(),
        );
    }
    if rule.completed_cutoff.is_some() && slowest.is_none() {
        pins.push(
            "no consumer group has read this partition: rule 2 deletes nothing unconsumed".into(),
        );
    }
    Boundaries {
        rule1,
        rule2,
        max_wait,
        slowest,
        pins,
    }
}

/// The first segment of `pid` from `log_start` on created at or after
/// `cutoff` (None: nothing is that fresh).
fn fresh_boundary(
    client: &mut SpiClient<'_>,
    pid: i64,
    log_start: i64,
    cutoff: TimestampWithTimeZone,
) -> Option<i64> {
    exec(
        client,
        query!("retention_explain_fresh_boundary"),
        &[spi::INT8, spi::INT8, spi::TIMESTAMPTZ],
        &[pid.into(), log_start.into(), cutoff.into()],
    )
    .next()
    .and_then(|r| spi::opt(&r, "boundary"))
}

/// The partition's failing steps, each also named in `pins`.
fn failures(client: &mut SpiClient<'_>, pid: i64, pins: &mut Vec<String>) -> Vec<Value> {
    exec(
        client,
        query!("retention_explain_failures"),
        &[spi::INT8, spi::INT2],
        &[pid.into(), DLQ_PHASE.into()],
    )
    .map(|r| {
        let (phase, state, error): (i16, String, String) =
            (spi::col(&r, "phase"), spi::col(&r, "sqlstate"), spi::col(&r, "error"));
        pins.push(format!("phase {phase}'s step failed here (SQLSTATE {state}: {error}); it is retried after a backoff"));
        json!({
            "phase": phase,
            "sqlstate": state,
            "error": error,
            "failedAt": micros_to_iso(spi::col::<i64>(&r, "failed_us")),
            "skipCycles": spi::col::<i32>(&r, "skip"),
            "failures": spi::col::<i32>(&r, "streak"),
        })
    })
    .collect()
}

/// Deleted messages per rule and time bucket (partition events left out).
pub fn timeseries(client: &mut SpiClient<'_>, since: TimestampWithTimeZone, bucket: &str) -> Value {
    if !matches!(bucket, "minute" | "hour" | "day") {
        errors::invalid(
            "bucket",
            format!("{bucket:?} is not one of minute, hour, day"),
        );
    }
    let rows = exec(
        client,
        query!("retention_explain_timeseries"),
        &[spi::TIMESTAMPTZ, spi::TEXT],
        &[since.into(), bucket.into()],
    );
    Value::Array(
        rows.map(|r| {
            json!({
                "bucket": micros_to_iso(spi::col::<i64>(&r, "bucket_us")),
                "retentionType": spi::col::<String>(&r, "retention_type"),
                "messagesDeleted": spi::col::<i64>(&r, "messages"),
                "segmentsDeleted": spi::col::<i64>(&r, "segments"),
            })
        })
        .collect(),
    )
}

/// Total, table and index sizes of the largest relations of the queen schema.
pub fn table_sizes(client: &mut SpiClient<'_>) -> Value {
    let rows = exec(client, query!("retention_explain_table_sizes"), &[], &[]);
    Value::Array(
        rows.map(|r| {
            json!({
                "table": format!("queen.{}", spi::col::<String>(&r, "relname")),
                "totalBytes": spi::col::<i64>(&r, "pg_total_relation_size"),
                "tableBytes": spi::col::<i64>(&r, "pg_table_size"),
                "indexBytes": spi::col::<i64>(&r, "pg_indexes_size"),
            })
        })
        .collect(),
    )
}
