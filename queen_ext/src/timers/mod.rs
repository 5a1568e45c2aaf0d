//! Timers in SQL: schedule, cancel, probe, claim and fire.

pub mod compact;
pub mod floors;
pub mod wake;

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::switches::{self, Surface};
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;
use crate::wire::json::{check_name, MAX_NAME_BYTES};
use crate::wire::DEFAULT_PARTITION;

/// Whether the schema fires timers by writing new rows (0.10.0 on): a
/// claim is a row of `queen.log_timer_claims` and a fire a row of
/// `queen.log_timers_done`. Before, the timer row is stamped by its claim
/// and deleted by its fire.
pub fn as_log() -> bool {
    spi::queen_table_exists(c"log_timers_done")
}

/// The timer (queue, key) locked, as a schedule, a reschedule or a cancel
/// finds it (on a schema of [`as_log`]): its schedule's message id and
/// whether it has fired. Done is read after the lock is granted: a fire
/// holding the row marks it done before it lets go.
fn locked(c: &mut SpiClient<'_>, queue: &str, timer_key: &str) -> Option<(pgrx::Uuid, bool)> {
    let mid: pgrx::Uuid = exec(
        c,
        query!("timers_lock"),
        &[spi::TEXT, spi::TEXT],
        &[queue.into(), timer_key.into()],
    )
    .next()
    .map(|r| spi::col(&r, "message_id"))?;
    let done = exec(c, query!("timers_done"), &[spi::UUID], &[mid.into()])
        .next()
        .is_some_and(|r| spi::col::<bool>(&r, "done"));
    Some((mid, done))
}

/// Deletes the claims of a replaced or cancelled schedule.
fn drop_claims(c: &mut SpiClient<'_>, mid: pgrx::Uuid) {
    exec(c, query!("timers_claims_drop"), &[spi::UUID], &[mid.into()]);
}

/// Writes a schedule on a schema of [`as_log`]: `None` when `only_existing`
/// and there is no timer that has not fired, else its due instant and
/// whether it replaced one that had not fired.
fn write_log(
    c: &mut SpiClient<'_>,
    types: &[pgrx::pg_sys::PgOid],
    args: &[pgrx::datum::DatumWithOid<'_>],
    queue: &str,
    timer_key: &str,
    only_existing: bool,
) -> Option<(i64, bool)> {
    // The transaction holds an id before the due instant is read from the
    // clock: a sweeper that does not yet see this write then counts its
    // start, or finds the instant later than what it read (`floors`).
    unsafe { pgrx::pg_sys::GetTopTransactionId() };
    let before = locked(c, queue, timer_key);
    let pending = before.filter(|(_, done)| !done).map(|(mid, _)| mid);
    if only_existing && pending.is_none() {
        return None;
    }
    let row = exec(c, query!("timers_upsert_log"), types, args).next()?;
    if let Some(mid) = pending {
        drop_claims(c, mid);
    }
    // A row written meanwhile by another schedule (none when this one
    // looked) is replaced too; it had not fired.
    let replaced = pending.is_some() || (before.is_none() && spi::col::<bool>(&row, "conflicted"));
    Some((spi::col(&row, "deliver_us"), replaced))
}

/// Schedules (upserts) a timer; with `only_existing` it reschedules one
/// that exists and answers `absent` otherwise. Answers the op's result.
#[allow(clippy::too_many_arguments)]
pub fn schedule(
    c: &mut SpiClient<'_>,
    queue: &str,
    timer_key: &str,
    payload: &[u8],
    delay_ms: i64,
    partition: Option<&str>,
    transaction_id: Option<&str>,
    only_existing: bool,
) -> Value {
    let queue = check_name("queue", queue);
    let timer_key = check_name("timer_key", timer_key);
    let partition = check_name("partition", partition.unwrap_or(DEFAULT_PARTITION));
    let txn = schedule_txn(transaction_id);
    refuse_unschedulable(c, delay_ms);
    let message_id = queen_frames::new_message_id();
    let mid = pgrx::Uuid::from_bytes(message_id);
    let args = [
        queue.into(),
        timer_key.into(),
        partition.into(),
        payload.into(),
        txn.as_str().into(),
        delay_ms.into(),
        mid.into(),
    ];
    let types = [
        spi::TEXT,
        spi::TEXT,
        spi::TEXT,
        spi::BYTEA,
        spi::TEXT,
        spi::INT8,
        spi::UUID,
    ];
    let written = write(c, &types, &args, queue, timer_key, only_existing);
    let Some((at, existed)) = written else {
        return json!({"ok": false, "status": "absent", "queue": queue, "timerKey": timer_key, "txn": txn});
    };
    wake::scheduled(at);
    json!({
        "ok": true,
        "status": if existed { "rescheduled" } else { "scheduled" },
        "queue": queue,
        "timerKey": timer_key,
        "partition": partition,
        "txn": txn,
        "transactionId": txn,
        "messageId": queen_frames::id_text(&message_id),
        "deliverAt": micros_to_iso(at),
    })
}

/// A schedule's transaction id: the caller's, checked, or one minted.
fn schedule_txn(transaction_id: Option<&str>) -> String {
    match transaction_id.filter(|t| !t.is_empty()) {
        Some(t) if t.len() > MAX_NAME_BYTES => {
            errors::too_long("transaction_id", t.len(), MAX_NAME_BYTES)
        }
        Some(t) => t.to_owned(),
        None => queen_frames::id_text(&queen_frames::new_message_id()),
    }
}

/// Refuses a delay further from now than the longest duration, and a
/// schedule while scheduling is switched off or paused.
fn refuse_unschedulable(c: &mut SpiClient<'_>, delay_ms: i64) {
    let max_ms = crate::wire::json::MAX_DURATION_SECONDS * 1000;
    if !(-max_ms..=max_ms).contains(&delay_ms) {
        errors::invalid(
            "delayMs",
            format!("{delay_ms} is further from now than {max_ms} milliseconds"),
        );
    }
    if !crate::pg::settings::timers_schedule_enabled() {
        errors::paused(
            Surface::TimersSchedule.key(),
            "timer scheduling is switched off (queen.timers_schedule_enabled)",
        );
    }
    switches::refuse_if_paused(c, Surface::TimersSchedule);
}

/// Writes a schedule: `None` when `only_existing` and there is no timer to
/// reschedule, else its due instant and whether it replaced one.
fn write(
    c: &mut SpiClient<'_>,
    types: &[pgrx::pg_sys::PgOid],
    args: &[pgrx::datum::DatumWithOid<'_>],
    queue: &str,
    timer_key: &str,
    only_existing: bool,
) -> Option<(i64, bool)> {
    // A reschedule only updates: one that waited behind a fire of the same
    // timer then finds its row gone and answers absent (an insert would
    // schedule the fired timer again).
    if as_log() {
        return write_log(c, types, args, queue, timer_key, only_existing);
    }
    let row = if only_existing {
        exec(c, query!("timers_reschedule"), types, args).next()
    } else {
        exec(c, query!("timers_upsert"), types, args).next()
    };
    row.map(|r| (spi::col(&r, "deliver_us"), spi::col(&r, "existed")))
}

pub fn cancel(c: &mut SpiClient<'_>, queue: &str, timer_key: &str) -> bool {
    let queue = check_name("queue", queue);
    let timer_key = check_name("timer_key", timer_key);
    if as_log() {
        let Some((mid, false)) = locked(c, queue, timer_key) else {
            return false;
        };
        exec(
            c,
            query!("timers_cancel_log"),
            &[spi::TEXT, spi::TEXT],
            &[queue.into(), timer_key.into()],
        );
        drop_claims(c, mid);
        return true;
    }
    !exec(
        c,
        query!("timers_cancel"),
        &[spi::TEXT, spi::TEXT],
        &[queue.into(), timer_key.into()],
    )
    .is_empty()
}

/// One parsed timer operation.
#[derive(Debug, Clone)]
pub struct TimerOp {
    pub index: usize,
    pub kind: OpKind,
    pub queue: String,
    pub timer_key: String,
    pub payload: Vec<u8>,
    pub delay_ms: i64,
    pub txn: Option<String>,
    pub partition: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Schedule,
    Reschedule,
    Cancel,
}

/// Parses Queen's timer body; every op is checked before any is applied.
pub fn parse_ops(body: &Value) -> Vec<TimerOp> {
    let o = crate::wire::json::Obj::new(body, "");
    let list = o
        .opt_array("operations")
        .unwrap_or_else(|| errors::invalid("operations", "is required"));
    if list.is_empty() {
        errors::invalid("operations", "must not be empty");
    }
    let max = crate::pg::settings::push_max_items();
    if list.len() > max {
        errors::invalid(
            "operations",
            format!(
                "{} operations is more than queen.push_max_items ({max})",
                list.len()
            ),
        );
    }
    let mut inflate = crate::wire::payload::Inflate::new();
    list.iter()
        .enumerate()
        .map(|(index, op)| parse_op(index, op, &mut inflate))
        .collect()
}

/// One timer op, `index` naming it in an error; a zstd payload spends the
/// request's decompression budget.
fn parse_op(index: usize, op: &Value, inflate: &mut crate::wire::payload::Inflate) -> TimerOp {
    use base64::Engine;
    let o = crate::wire::json::Obj::new(op, format!("operations[{index}]"));
    for owned in [
        "producerSub",
        "messageId",
        "deliverAt",
        "delaySeconds",
        "attempts",
        "claimToken",
        "tenant",
        "tenantId",
    ] {
        if o.map.contains_key(owned) {
            errors::invalid(
                &o.field(owned),
                "is set by the server and can not be supplied",
            );
        }
    }
    let kind = match o.req_str("op") {
        "schedule" => OpKind::Schedule,
        "reschedule" => OpKind::Reschedule,
        "cancel" => OpKind::Cancel,
        other => errors::invalid(
            &o.field("op"),
            format!("{other:?} is not one of schedule, reschedule, cancel"),
        ),
    };
    let queue = o.req_name("queue").to_owned();
    let timer_key = o.req_name("timerKey").to_owned();
    let txn = o.opt_str("txn").map(str::to_owned);
    let partition = o.opt_name("partition").map(str::to_owned);
    let (payload, delay_ms) = if kind == OpKind::Cancel {
        (Vec::new(), 0)
    } else {
        let encoded = o.req_str("payload");
        let mut raw = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap_or_else(|e| {
                errors::invalid(&o.field("payload"), format!("is not base64: {e}"))
            });
        if o.opt_bool("payloadZstd").unwrap_or(false) {
            raw = inflate.take(&o.field("payload"), &raw);
        }
        if let Some(problem) = crate::wire::payload::payload_problem(&raw) {
            errors::invalid(&o.field("payload"), problem);
        }
        let delay = o
            .opt_i64("delayMs")
            .unwrap_or_else(|| errors::invalid(&o.field("delayMs"), "is required"));
        (raw, delay)
    };
    TimerOp {
        index,
        kind,
        queue,
        timer_key,
        payload,
        delay_ms,
        txn,
        partition,
    }
}

/// Applies the ops, taking timer rows in (queue, timer_key) order; results
/// in request order.
pub fn apply(c: &mut SpiClient<'_>, ops: &[TimerOp]) -> Vec<Value> {
    let mut order: Vec<&TimerOp> = ops.iter().collect();
    order.sort_by(|a, b| {
        (a.queue.as_bytes(), a.timer_key.as_bytes(), a.index).cmp(&(
            b.queue.as_bytes(),
            b.timer_key.as_bytes(),
            b.index,
        ))
    });
    let mut results: Vec<Value> = vec![Value::Null; ops.len()];
    for op in order {
        results[op.index] = match op.kind {
            OpKind::Cancel => {
                if cancel(c, &op.queue, &op.timer_key) {
                    json!({"ok": true, "status": "cancelled", "queue": op.queue, "timerKey": op.timer_key})
                } else {
                    json!({"ok": false, "status": "absent", "queue": op.queue, "timerKey": op.timer_key, "txn": op.txn})
                }
            }
            kind => schedule(
                c,
                &op.queue,
                &op.timer_key,
                &op.payload,
                op.delay_ms,
                op.partition.as_deref(),
                op.txn.as_deref(),
                kind == OpKind::Reschedule,
            ),
        };
    }
    results
}

/// The timers set aside after too many failed fires (one queue, or all),
/// the last failed first, at most `max_rows`.
pub fn set_aside(c: &mut SpiClient<'_>, queue: Option<&str>, max_rows: i64) -> Vec<Value> {
    exec(
        c,
        query!("timers_set_aside"),
        &[spi::TEXT, spi::INT8],
        &[queue.into(), max_rows.into()],
    )
    .map(|r| {
        serde_json::from_str(&spi::col::<String>(&r, "timer"))
            .expect("json_build_object prints JSON")
    })
    .collect()
}

/// How many timers are set aside, counted from the table (so the count
/// survives a restart).
pub fn set_aside_count(c: &mut SpiClient<'_>) -> Option<i64> {
    exec(
        c,
        "SELECT count(*)::int8 AS set_aside FROM queen.log_timers_failed",
        &[],
        &[],
    )
    .next()
    .and_then(|r| spi::opt(&r, "set_aside"))
}
