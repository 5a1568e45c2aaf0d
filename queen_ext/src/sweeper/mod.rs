//! The sweeper: timers fired into the log, leaderless under SKIP LOCKED.
//!
//! PROBE (one read-only call, one now()), DRAIN (claim and fire in the same
//! iteration, claiming stops at half the lease), SLEEP (a pure function of
//! four bands). Every worker scans every shard; only the shard it starts at
//! differs. No advisory lock, no election.

pub mod metrics;
pub mod sleep;
pub mod timers;
pub mod wake;
pub mod worker;

use std::sync::atomic::{AtomicBool, Ordering};

use pgrx::prelude::*;
use serde_json::json;

use crate::errors;
use crate::guc;
use crate::jsonio::{JsonOut, JsonbArg};
use crate::sql;

/// Set in the postmaster when the library is preloaded (and inherited by
/// every backend): only then do the sweepers' shared areas exist.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// Requests the wake's and the metrics' shared memory, when preloading.
pub fn init_shmem() {
    if unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        wake::init_shmem();
        metrics::init_shmem();
        PRELOADED.store(true, Ordering::SeqCst);
    }
}

fn preloaded() -> bool {
    PRELOADED.load(Ordering::SeqCst)
}

/// Schedules (or reschedules: the same upsert) a timer: a message with
/// `payload` delivered into queue/partition `delay_ms` from now, under
/// `transaction_id` (minted when NULL).
#[pg_extern]
fn timer_schedule(
    queue: &str,
    timer_key: &str,
    payload: Option<JsonbArg>,
    delay_ms: i64,
    partition: default!(Option<&str>, "NULL"),
    transaction_id: default!(Option<&str>, "NULL"),
) -> JsonOut {
    let payload = payload
        .map(|JsonbArg(t)| t)
        .unwrap_or_else(|| "null".into());
    JsonOut::of(&sql::spi(|c| {
        timers::schedule(
            c,
            queue,
            timer_key,
            payload.as_bytes(),
            delay_ms,
            partition,
            transaction_id,
            false,
        )
    }))
}

/// Timer operations in one transaction, Queen's timer body:
/// `{"operations": [{"op": "schedule" | "reschedule" | "cancel", "queue",
/// "timerKey", "payload" (base64 of one JSON document), "delayMs", "txn",
/// "partition", "payloadZstd"}]}`. Rows are taken in (queue, timerKey)
/// order; results come back in the request's order.
#[pg_extern]
fn timers(body: Option<JsonbArg>) -> JsonOut {
    let text = body
        .map(|JsonbArg(t)| t)
        .unwrap_or_else(|| errors::invalid("operations", "is required"));
    let body = crate::json::parse_value("operations", &text);
    let ops = timers::parse_ops(&body);
    JsonOut::of(&sql::spi(|c| json!({"results": timers::apply(c, &ops)})))
}

/// Cancels a timer; `cancelled: false` when there was none (it may already
/// have fired: the log is the authority).
#[pg_extern]
fn timer_cancel(queue: &str, timer_key: &str) -> JsonOut {
    JsonOut::of(&sql::spi(
        |c| json!({"cancelled": timers::cancel(c, queue, timer_key)}),
    ))
}

/// The probe: next due instant, due count and lateness, from one now().
#[pg_extern(schema = "queen_internal")]
fn sweeper_probe_v1() -> JsonOut {
    JsonOut::of(&sql::spi(timers::probe))
}

/// Claims up to `p_batch` due timers from shard `p_start_shard` on for
/// `p_lease_ms`: `{"token", "claimed"}`.
#[pg_extern(schema = "queen_internal")]
fn sweeper_claim_v1(p_start_shard: i32, p_batch: i32, p_lease_ms: i32) -> JsonOut {
    if p_batch <= 0 || p_lease_ms <= 0 {
        errors::invalid("p_batch", "batch and lease must be positive");
    }
    JsonOut::of(&sql::spi(|c| {
        timers::claim(c, p_start_shard, p_batch, p_lease_ms)
    }))
}

/// Fires the timers claimed under `p_token`, at most `p_max_bytes` of
/// payload: `{"fired", "bytes", "done"}`.
#[pg_extern(schema = "queen_internal")]
fn sweeper_fire_v1(p_token: &str, p_max_bytes: default!(Option<i64>, "NULL")) -> JsonOut {
    let token = crate::json::parse_uuid("p_token", p_token);
    let max = p_max_bytes.unwrap_or(guc::SWEEPER_MAX_FIRE_BYTES.get() as i64);
    JsonOut::of(&sql::spi(|c| timers::fire(c, token, max)))
}

/// Timers set aside after their last allowed fire failed, newest first (one
/// queue, or all): what they would have delivered, and why they could not.
#[pg_extern]
fn timers_set_aside(
    queue: default!(Option<&str>, "NULL"),
    max_rows: default!(i32, 100),
) -> JsonOut {
    if max_rows <= 0 {
        errors::invalid("max_rows", format!("{max_rows} must be at least 1"));
    }
    let rows: Vec<serde_json::Value> = sql::spi(|c| {
        sql::exec(
            c,
            "SELECT json_build_object('queue', queue, 'timerKey', timer_key, 'partition', partition,
                        'transactionId', transaction_id, 'messageId', message_id, 'deliverAt', deliver_at,
                        'attempts', attempts, 'error', last_error, 'failedAt', failed_at,
                        'payload', encode(payload, 'base64'))::text
               FROM queen.log_timers_failed WHERE $1::text IS NULL OR queue = $1
              ORDER BY failed_at DESC, id DESC LIMIT $2",
            &[sql::TEXT, sql::INT8],
            &[queue.into(), (max_rows as i64).into()],
        )
        .map(|r| serde_json::from_str(&r.get::<String>(1).unwrap().unwrap()).expect("json_build_object prints JSON"))
        .collect()
    });
    JsonOut::of(&json!({"timers": rows}))
}

/// What the sweepers did: fired count and lateness, due count, KV rows
/// expired but still present, and whether a slow phase is off.
#[pg_extern]
fn sweeper_metrics() -> JsonOut {
    let mut m = metrics::snapshot();
    // Set aside for good: counted from the table, so it survives a restart.
    m["timersSetAside"] = json!(sql::spi(|c| {
        sql::exec(
            c,
            "SELECT count(*)::int8 FROM queen.log_timers_failed",
            &[],
            &[],
        )
        .next()
        .and_then(|r| r.get::<i64>(1).unwrap())
    }));
    JsonOut::of(&m)
}

/// One sweep step from SQL: one claim of up to `queen.sweeper_claim_batch`
/// due timers and their fires, in the caller's transaction. Answers what
/// it did.
#[pg_extern(schema = "queen_internal")]
fn sweeper_run_once() -> JsonOut {
    let settings = worker::Settings::from_gucs();
    JsonOut::of(
        &timers::run_once(&settings, 0).unwrap_or_else(|e| errors::raise(&e.sqlstate, e.message)),
    )
}
