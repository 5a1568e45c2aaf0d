//! Reading pending timers: one by key (with its payload), and a queue's
//! timers page by page by key in byte order (without payloads), the shapes
//! Queen's server answers. Queen keeps fields the engine does not
//! (`payloadZstd`, `encrypted`, `producerSub`, `updatedAt`): they answer
//! false, false, null and the row's `createdAt`.

use base64::Engine;
use pgrx::spi::SpiClient;
use serde_json::{json, Map, Value};

use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;
use crate::timers;
use crate::wire::json::check_name;

/// The timers one page lists when no limit is given.
pub const DEFAULT_PAGE_ROWS: i64 = 100;

/// The fields of one timer row that both reads answer.
fn row_fields(r: &pgrx::spi::SpiHeapTupleData<'_>) -> Map<String, Value> {
    let created = micros_to_iso(spi::col::<i64>(r, "created_us"));
    let v = json!({
        "queue": spi::col::<String>(r, "queue"),
        "timerKey": spi::col::<String>(r, "timer_key"),
        "partition": spi::col::<String>(r, "partition"),
        "deliverAt": micros_to_iso(spi::col::<i64>(r, "deliver_us")),
        "txn": spi::col::<String>(r, "transaction_id"),
        "messageId": spi::col::<String>(r, "message_id"),
        "payloadZstd": false,
        "encrypted": false,
        "producerSub": Value::Null,
        "attempts": spi::col::<i32>(r, "attempts"),
        "lastError": spi::opt::<String>(r, "last_error"),
        "claimed": spi::col::<bool>(r, "claimed"),
        "createdAt": created,
        "updatedAt": created,
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!("json! of an object"),
    }
}

/// One pending timer: `{"found": true, …, "payload"}` (the payload as
/// stored, base64), or `{"found": false, "queue", "timerKey"}`.
pub fn peek(c: &mut SpiClient<'_>, queue: &str, timer_key: &str) -> Value {
    let queue = check_name("queue", queue);
    let timer_key = check_name("timerKey", timer_key);
    let sql = if timers::as_log() {
        query!("timers_peek_log")
    } else {
        query!("timers_peek")
    };
    let row = exec(
        c,
        sql,
        &[spi::TEXT, spi::TEXT],
        &[queue.into(), timer_key.into()],
    )
    .next();
    let Some(r) = row else {
        return json!({"found": false, "queue": queue, "timerKey": timer_key});
    };
    let mut m = Map::new();
    m.insert("found".into(), Value::Bool(true));
    m.extend(row_fields(&r));
    let payload = spi::col::<Vec<u8>>(&r, "payload");
    m.insert(
        "payload".into(),
        Value::String(base64::engine::general_purpose::STANDARD.encode(payload)),
    );
    Value::Object(m)
}

/// A page of `queue`'s pending timers by key in byte order, after `after`
/// (exclusive): at most `limit` rows (default [`DEFAULT_PAGE_ROWS`],
/// clamped to 1..`queen.read_page_max_rows`), `truncated` when more
/// follow, and `nextAfter`, the key to ask after next (null at the end).
pub fn list(c: &mut SpiClient<'_>, queue: &str, after: Option<&str>, limit: Option<i64>) -> Value {
    let queue = check_name("queue", queue);
    let after = after.filter(|a| !a.is_empty());
    let limit = limit
        .unwrap_or(DEFAULT_PAGE_ROWS)
        .clamp(1, settings::read_page_max_rows());
    let sql = if timers::as_log() {
        query!("timers_list_log")
    } else {
        query!("timers_list")
    };
    let mut rows: Vec<Map<String, Value>> = exec(
        c,
        sql,
        &[spi::TEXT, spi::TEXT, spi::INT8],
        &[queue.into(), after.into(), (limit + 1).into()],
    )
    .map(|r| row_fields(&r))
    .collect();
    let truncated = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_after = if truncated {
        rows.last().map(|r| r["timerKey"].clone())
    } else {
        None
    };
    json!({"rows": rows, "truncated": truncated, "nextAfter": next_after, "limit": limit})
}
