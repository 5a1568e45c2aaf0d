//! Reads by offset: fetch (records of named partitions from given offsets)
//! and the partitions changed since a time. Both only read: no lease is
//! taken, no cursor is read, created or moved, so two callers asking the
//! same offsets get the same records and a consumer group sees nothing of
//! them. The answers are Queen's (`/api/v1/fetch`,
//! `/api/v1/partitions/changed`), index-aligned with the request's entries,
//! with Kafka's per-entry error names.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::queues::default_tenant;
use crate::engine::segments;
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;
use crate::wire::json::{as_i64, check_name, write_int, write_str, Obj};
use crate::wire::DEFAULT_PARTITION;

/// The entry error for a queue that does not exist.
pub const UNKNOWN_TOPIC_OR_PARTITION: &str = "UNKNOWN_TOPIC_OR_PARTITION";
/// The entry error for an offset below the log start or past the end.
pub const OFFSET_OUT_OF_RANGE: &str = "OFFSET_OUT_OF_RANGE";
/// The entry error for a page cursor of another mode or form.
pub const BAD_CURSOR: &str = "BAD_CURSOR";

/// Payload bytes an entry answers when it names no `maxBytes`.
pub const DEFAULT_ENTRY_BYTES: i64 = 1024 * 1024;
/// Records one fetch entry answers at most.
pub const MAX_RECORDS_PER_ENTRY: usize = 10_000;
/// Segments one scan of a fetch reads before the next.
pub const SCAN_SEGMENTS: i64 = 16;
/// The longest a fetch may ask to wait, in milliseconds (Queen's bound).
pub const MAX_WAIT_MS: i64 = 30_000;

/// Entries one partitions-changed call takes at most.
pub const MAX_CHANGED_ENTRIES: usize = 64;
/// Partitions one changed page lists when the entry names no limit.
pub const DEFAULT_CHANGED_ROWS: i64 = 1000;
/// How far behind now `safeTime` stays: writes whose clock reading is older
/// than their commit (a push takes its timestamp before it commits).
pub const SAFE_TIME_GUARD_US: i64 = 5_000_000;
/// How far behind now `safeTime` stays when other sessions' transactions
/// can not be seen (`safeTimeDegraded`).
pub const SAFE_TIME_DEGRADED_US: i64 = 30_000_000;

/// One entry of a fetch, checked.
struct FetchEntry {
    queue: String,
    partition: String,
    offset: i64,
    max_bytes: i64,
}

/// The fetch request's checked body.
pub struct FetchRequest {
    entries: Vec<FetchEntry>,
    /// The wait asked for (0..[`MAX_WAIT_MS`]); the engine answers at once,
    /// a front-end may poll until it passes.
    pub max_wait_ms: i64,
    /// Payload bytes that end a wait (at least 0; default 1).
    pub min_bytes: i64,
}

/// A partition name: a string, or a number read as its decimal text.
fn partition_name(o: &Obj<'_>) -> String {
    match o.get("partition") {
        None => DEFAULT_PARTITION.to_owned(),
        Some(Value::String(s)) => check_name(&o.field("partition"), s).to_owned(),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
        Some(_) => errors::wrong_type(&o.field("partition"), "a string or an integer"),
    }
}

/// Checks a fetch body: `{"entries": [{"queue", "partition"?, "offset",
/// "maxBytes"?}], "maxWaitMs"?, "minBytes"?}`. Every entry is checked
/// before anything is read.
pub fn parse_fetch(body: &Value) -> FetchRequest {
    let o = Obj::new(body, "");
    let list = o.opt_array("entries").map(Vec::as_slice).unwrap_or(&[]);
    let max = settings::fetch_max_entries();
    if list.len() > max {
        errors::invalid(
            "entries",
            format!(
                "{} entries is more than queen.fetch_max_entries ({max})",
                list.len()
            ),
        );
    }
    let ceiling = settings::fetch_entry_max_bytes();
    let entries = list
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let e = Obj::new(e, format!("entries[{i}]"));
            let offset = match e.get("offset") {
                Some(v) => as_i64(&e.field("offset"), v),
                None => errors::invalid(&e.field("offset"), "is required"),
            };
            if offset < 0 {
                errors::invalid(
                    &e.field("offset"),
                    format!(
                        "{offset} is negative; read the bounds from highWatermark \
                         and logStartOffset"
                    ),
                );
            }
            FetchEntry {
                queue: e.req_name("queue").to_owned(),
                partition: partition_name(&e),
                offset,
                max_bytes: e
                    .opt_i64("maxBytes")
                    .unwrap_or(DEFAULT_ENTRY_BYTES)
                    .clamp(1, ceiling),
            }
        })
        .collect();
    let max_wait_ms = o.opt_i64("maxWaitMs").unwrap_or(0);
    if max_wait_ms < 0 {
        errors::invalid("maxWaitMs", format!("{max_wait_ms} is negative"));
    }
    FetchRequest {
        entries,
        max_wait_ms: max_wait_ms.min(MAX_WAIT_MS),
        min_bytes: o.opt_i64("minBytes").unwrap_or(1).max(0),
    }
}

/// What a fetch read: the answer's text and the payload bytes delivered
/// (each record counting at least one), which a waiting front-end reads.
pub struct Fetched {
    pub text: String,
    pub bytes: i64,
    pub any_error: bool,
}

/// A fetch entry resolved: whether its queue exists, and its partition's
/// id, high watermark (next offset) and log start, if it was ever written.
type Resolved = (bool, Option<(i64, i64, i64)>);

/// The call's byte budget, spent across entries in request order.
struct Budget {
    left: i64,
    records: usize,
}

/// Reads every entry: index-aligned `{"entries": [{"queue", "partition",
/// "records": [{"offset", "transactionId", "payload", "ts"}],
/// "highWatermark", "logStartOffset", "error"?}]}`. An entry stops at its
/// `maxBytes`, the call at `queen.fetch_call_max_bytes`; the call's first
/// record, and each entry's first while the call has bytes left, is always
/// delivered.
pub fn fetch(c: &mut SpiClient<'_>, req: &FetchRequest) -> Fetched {
    let queues: Vec<&str> = req.entries.iter().map(|e| e.queue.as_str()).collect();
    let parts: Vec<&str> = req.entries.iter().map(|e| e.partition.as_str()).collect();
    let resolved: Vec<Resolved> = exec(
        c,
        query!("reads_fetch_resolve"),
        &[spi::UUID, spi::TEXT_ARRAY, spi::TEXT_ARRAY],
        &[default_tenant().into(), queues.into(), parts.into()],
    )
    .map(|r| {
        let queue = spi::opt::<i64>(&r, "queue_id").is_some();
        let part = spi::opt::<i64>(&r, "partition_id").map(|pid| {
            (
                pid,
                spi::col::<i64>(&r, "last_offset") + 1,
                spi::col::<i64>(&r, "log_start"),
            )
        });
        (queue, part)
    })
    .collect();
    let mut budget = Budget {
        left: settings::fetch_call_max_bytes(),
        records: 0,
    };
    let mut out = Fetched {
        text: String::from("{\"entries\":["),
        bytes: 0,
        any_error: false,
    };
    for (i, (e, (queue_exists, part))) in req.entries.iter().zip(resolved).enumerate() {
        if i > 0 {
            out.text.push(',');
        }
        let (high, start) = part.map_or((0, 0), |(_, h, s)| (h, s.min(h)));
        let error = if !queue_exists {
            Some(UNKNOWN_TOPIC_OR_PARTITION)
        } else if e.offset < start || e.offset > high {
            Some(OFFSET_OUT_OF_RANGE)
        } else {
            None
        };
        out.text.push_str("{\"queue\":");
        write_str(&mut out.text, &e.queue);
        out.text.push_str(",\"partition\":");
        write_str(&mut out.text, &e.partition);
        out.text.push_str(",\"records\":[");
        if let (None, Some((pid, _, _))) = (error, part) {
            out.bytes += read_entry(c, &mut out.text, pid, e, high, &mut budget);
        }
        out.text.push_str("],\"highWatermark\":");
        write_int(&mut out.text, high);
        out.text.push_str(",\"logStartOffset\":");
        write_int(&mut out.text, start);
        if let Some(err) = error {
            out.any_error = true;
            out.text.push_str(",\"error\":");
            write_str(&mut out.text, err);
        }
        out.text.push('}');
    }
    out.text.push_str("]}");
    out
}

/// Writes the records of one entry from its offset up to `high`, within
/// its budget and the call's; answers the bytes delivered.
fn read_entry(
    c: &mut SpiClient<'_>,
    out: &mut String,
    pid: i64,
    e: &FetchEntry,
    high: i64,
    budget: &mut Budget,
) -> i64 {
    let mut from = e.offset;
    let (mut bytes, mut records) = (0i64, 0usize);
    'scan: while from < high {
        let scan = segments::scan_from(c, pid, from, high - from, SCAN_SEGMENTS);
        let Some(last) = scan.segments.last().map(|s| s.end_offset) else {
            break;
        };
        for seg in &scan.segments {
            let ts = micros_to_iso(seg.created_at_us);
            for (k, f) in seg.frames().enumerate() {
                let offset = seg.base_offset + k as i64;
                if offset < from {
                    continue;
                }
                if offset >= high {
                    break 'scan;
                }
                let size = (f.payload.len() as i64).max(1);
                let first_of_call = budget.records == 0;
                let first_of_entry = records == 0 && budget.left > 0;
                let fits = bytes + size <= e.max_bytes && size <= budget.left;
                if records >= MAX_RECORDS_PER_ENTRY || !(first_of_call || first_of_entry || fits) {
                    break 'scan;
                }
                if f.is_encrypted() {
                    errors::corrupt(format!(
                        "message at offset {offset} of partition {pid} is encrypted \
                         and can not be decoded here"
                    ));
                }
                let payload = std::str::from_utf8(f.payload).unwrap_or_else(|_| {
                    errors::corrupt(format!(
                        "message at offset {offset} of partition {pid}: payload is not UTF-8"
                    ))
                });
                if records > 0 {
                    out.push(',');
                }
                out.push_str("{\"offset\":");
                write_int(out, offset);
                out.push_str(",\"transactionId\":");
                write_str(out, f.transaction_id);
                out.push_str(",\"payload\":");
                out.push_str(payload);
                out.push_str(",\"ts\":\"");
                out.push_str(&ts);
                out.push_str("\"}");
                records += 1;
                bytes += size;
                budget.records += 1;
                budget.left -= size;
            }
        }
        if !scan.more || last < from {
            break;
        }
        from = last + 1;
    }
    bytes
}

/// One entry of a partitions-changed call, checked.
struct ChangedEntry {
    queue: String,
    since_us: Option<i64>,
    after: Option<String>,
    limit: i64,
}

/// Checks a partitions-changed body: `{"entries": [{"queue", "since"?
/// (ISO 8601; no offset reads as UTC), "after"? (the page cursor),
/// "limit"?}]}`, at most [`MAX_CHANGED_ENTRIES`].
fn parse_changed(c: &mut SpiClient<'_>, body: &Value) -> Vec<ChangedEntry> {
    let o = Obj::new(body, "");
    let list = o.opt_array("entries").map(Vec::as_slice).unwrap_or(&[]);
    if list.len() > MAX_CHANGED_ENTRIES {
        errors::invalid(
            "entries",
            format!(
                "{} entries is more than the {MAX_CHANGED_ENTRIES} allowed",
                list.len()
            ),
        );
    }
    let max_rows = settings::read_page_max_rows();
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            let e = Obj::new(e, format!("entries[{i}]"));
            let queue = e.req_name("queue").to_owned();
            let since_us = e
                .opt_str("since")
                .map(|s| since_us(c, &e.field("since"), s));
            ChangedEntry {
                queue,
                since_us,
                after: e
                    .opt_str("after")
                    .filter(|a| !a.is_empty())
                    .map(str::to_owned),
                limit: e
                    .opt_i64("limit")
                    .unwrap_or(DEFAULT_CHANGED_ROWS)
                    .clamp(1, max_rows),
            }
        })
        .collect()
}

/// Whether ISO text names its offset from UTC (`Z`, `+hh`, `-hh` after
/// the time of day).
fn has_zone(text: &str) -> bool {
    let time = match text.find(['T', 't', ' ']) {
        Some(i) => &text[i + 1..],
        None => return false,
    };
    time.contains(['Z', 'z', '+', '-']) || time.trim().chars().any(char::is_alphabetic)
}

/// `text` as epoch microseconds, read by PostgreSQL (bad text is 22007 or
/// 22008, naming the field); without an offset it is UTC.
fn since_us(c: &mut SpiClient<'_>, field: &str, text: &str) -> i64 {
    if text.trim().is_empty() {
        errors::invalid(field, "must not be empty");
    }
    let text = if has_zone(text) {
        text.to_owned()
    } else {
        format!("{text} UTC")
    };
    exec(
        c,
        query!("reads_since_us"),
        &[spi::TEXT],
        &[text.as_str().into()],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "since_us"))
    .unwrap_or_else(|| errors::invalid(field, "is not a time"))
}

/// A page cursor: the mode it belongs to and the position after which the
/// next page starts.
enum Cursor {
    Name(String),
    Since(i64, String),
}

impl Cursor {
    fn text(&self) -> String {
        match self {
            Cursor::Name(n) => format!("n:{n}"),
            Cursor::Since(us, n) => format!("t:{us}:{n}"),
        }
    }

    /// The cursor in `text`, if it is one of the mode (`since` set or not).
    fn parse(text: &str, since: bool) -> Option<Cursor> {
        if since {
            let (us, name) = text.strip_prefix("t:")?.split_once(':')?;
            Some(Cursor::Since(us.parse().ok()?, name.to_owned()))
        } else {
            Some(Cursor::Name(text.strip_prefix("n:")?.to_owned()))
        }
    }
}

/// `safeTime` (epoch microseconds) and whether it is degraded: now less
/// [`SAFE_TIME_GUARD_US`], and no later than the start of the oldest open
/// transaction of this database that has written. The function runs with
/// the owner's rights, so pg_stat_activity shows every session's
/// `xact_start`; an owner that could not see some would make it degraded
/// (now less [`SAFE_TIME_DEGRADED_US`]).
fn safe_time(c: &mut SpiClient<'_>) -> (i64, bool) {
    let r = exec(c, query!("reads_safe_time"), &[], &[])
        .next()
        .expect("one row");
    let now: i64 = spi::col(&r, "now_us");
    let oldest = spi::opt::<i64>(&r, "oldest_write_us");
    let hidden: i64 = spi::col(&r, "hidden");
    if hidden > 0 {
        return (now - SAFE_TIME_DEGRADED_US, true);
    }
    let guarded = now - SAFE_TIME_GUARD_US;
    (oldest.map_or(guarded, |o| o.min(guarded)), false)
}

/// The partitions changed, Queen's answer: `{"entries": [{"queue",
/// "partitions": [{"name", "id", "lastOffset", "logStart", "lastWriteAt"}],
/// "next": cursor | null, "error"?}], "safeTime", "safeTimeDegraded"?}`.
/// Without `since`, every partition by name; with it, those last written
/// at or after it, by (last write, name). A queue that does not exist is
/// `UNKNOWN_TOPIC_OR_PARTITION`, a cursor of another mode `BAD_CURSOR`.
pub fn changed(c: &mut SpiClient<'_>, body: &Value) -> Value {
    let entries = parse_changed(c, body);
    let (safe_us, degraded) = safe_time(c);
    let answers: Vec<Value> = entries.iter().map(|e| changed_entry(c, e)).collect();
    let mut out = json!({"entries": answers, "safeTime": micros_to_iso(safe_us)});
    if degraded {
        out["safeTimeDegraded"] = Value::Bool(true);
    }
    out
}

/// One entry's answer: a page of the queue's changed partitions, or its
/// error.
fn changed_entry(c: &mut SpiClient<'_>, e: &ChangedEntry) -> Value {
    let failed =
        |error: &str| json!({"queue": e.queue, "partitions": [], "next": null, "error": error});
    let queue_id = exec(
        c,
        query!("reads_queue_id"),
        &[spi::UUID, spi::TEXT],
        &[default_tenant().into(), e.queue.as_str().into()],
    )
    .next()
    .map(|r| spi::col::<i64>(&r, "id"));
    let Some(queue_id) = queue_id else {
        return failed(UNKNOWN_TOPIC_OR_PARTITION);
    };
    let cursor = match e.after.as_deref() {
        None => None,
        Some(text) => match Cursor::parse(text, e.since_us.is_some()) {
            Some(cur) => Some(cur),
            None => return failed(BAD_CURSOR),
        },
    };
    let page = changed_rows(c, e, queue_id, cursor.as_ref());
    changed_page(e, page)
}

/// A changed partition: id, name, last offset, log start and last write
/// (epoch µs).
type Changed = (i64, String, i64, i64, i64);

/// The changed partitions of `queue_id` past `cursor`, one more than the
/// entry's limit (the one past it says a next page exists).
fn changed_rows(
    c: &mut SpiClient<'_>,
    e: &ChangedEntry,
    queue_id: i64,
    cursor: Option<&Cursor>,
) -> Vec<Changed> {
    let want = e.limit + 1;
    let rows = match (e.since_us, cursor) {
        (None, cur) => {
            let after = match cur {
                Some(Cursor::Name(n)) => Some(n.as_str()),
                _ => None,
            };
            exec(
                c,
                query!("reads_changed_by_name"),
                &[spi::INT8, spi::TEXT, spi::INT8],
                &[queue_id.into(), after.into(), want.into()],
            )
        }
        (Some(since), cur) => {
            let (at, name) = match cur {
                Some(Cursor::Since(us, n)) => (Some(*us), Some(n.as_str())),
                _ => (None, None),
            };
            exec(
                c,
                query!("reads_changed_since"),
                &[spi::INT8, spi::INT8, spi::INT8, spi::TEXT, spi::INT8],
                &[
                    queue_id.into(),
                    since.into(),
                    at.into(),
                    name.into(),
                    want.into(),
                ],
            )
        }
    };
    rows.map(|r| {
        (
            spi::col(&r, "id"),
            spi::col(&r, "name"),
            spi::col(&r, "last_offset"),
            spi::col(&r, "log_start"),
            spi::col(&r, "last_write_us"),
        )
    })
    .collect()
}

/// The entry's answer for `page` (its limit and one more at most): the
/// partitions up to the limit, and the cursor past the last of them when
/// there are more.
fn changed_page(e: &ChangedEntry, mut page: Vec<Changed>) -> Value {
    let more = page.len() as i64 > e.limit;
    page.truncate(e.limit as usize);
    let next = page.last().filter(|_| more).map(|(_, name, _, _, us)| {
        if e.since_us.is_some() {
            Cursor::Since(*us, name.clone()).text()
        } else {
            Cursor::Name(name.clone()).text()
        }
    });
    let partitions: Vec<Value> = page
        .into_iter()
        .map(|(id, name, last, start, us)| {
            json!({"name": name, "id": id.to_string(), "lastOffset": last, "logStart": start,
                   "lastWriteAt": micros_to_iso(us)})
        })
        .collect();
    json!({"queue": e.queue, "partitions": partitions, "next": next})
}
