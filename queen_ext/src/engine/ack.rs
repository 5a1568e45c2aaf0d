//! Acknowledgements, lease renewal and dead-lettering.
//!
//! An ack names a message by (partitionId, transactionId); the transaction id
//! resolves to an offset through the hash sidecar. One that can not be
//! resolved counts as not acked: redelivery over loss. The ack path takes
//! consumer row locks only, ordered by (partition_id, consumer_group), and
//! never a partition lock.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use pgrx::spi::SpiClient;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::engine::dlq;
use crate::engine::push::txn_hash;
use crate::engine::soft_commit::{self, Soft};
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::json::{as_i64, check_name, parse_uuid, IdNum, Obj, MAX_NAME_BYTES};
use crate::wire::QUEUE_MODE;

/// One byte of lease state per offset of a leased batch.
const OPEN: u8 = 0;
const DONE: u8 = 1;
const FAILED: u8 = 2;
const RETRY: u8 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Completed,
    Failed,
    Retry,
    Dlq,
}

impl Status {
    /// The status a name stands for; None for no status.
    fn from_name(s: &str) -> Option<Status> {
        match s {
            "completed" | "success" => Some(Status::Completed),
            "failed" => Some(Status::Failed),
            "retry" => Some(Status::Retry),
            "dlq" => Some(Status::Dlq),
            _ => None,
        }
    }
    fn parse(field: &str, s: &str) -> Status {
        Status::from_name(s).unwrap_or_else(|| {
            errors::invalid(
                field,
                format!("{s:?} is not one of completed, failed, retry, dlq"),
            )
        })
    }
    fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Retry => "retry",
            Status::Dlq => "dlq",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AckIn {
    pub index: usize,
    pub transaction_id: String,
    pub partition_id: i64,
    pub status: Status,
    pub lease_id: Option<uuid::Uuid>,
    pub group: String,
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct AckOut {
    pub index: usize,
    pub transaction_id: String,
    pub partition_id: i64,
    pub status: Status,
    pub group: String,
    pub error: Option<String>,
    pub dead_lettered: bool,
    /// The offset the transaction id resolved to.
    pub offset: Option<i64>,
    /// Done, but not as asked (a dead-lettering whose message retention had
    /// already deleted).
    pub warning: Option<String>,
}

impl AckOut {
    pub fn success(&self) -> bool {
        self.error.is_none()
    }
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.answer()).expect("answers serialize")
    }

    /// The answer for this ack, borrowing its fields.
    pub fn answer(&self) -> AckAnswer<'_> {
        AckAnswer {
            index: self.index,
            transaction_id: &self.transaction_id,
            partition_id: IdNum(self.partition_id),
            status: self.status.as_str(),
            consumer_group: (self.group != QUEUE_MODE).then_some(self.group.as_str()),
            success: self.success(),
            error: self.error.as_deref(),
            dlq: self.dead_lettered.then_some(true),
            warning: self.warning.as_deref(),
        }
    }
}

/// One item of an ack answer.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AckAnswer<'a> {
    index: usize,
    transaction_id: &'a str,
    partition_id: IdNum,
    status: &'static str,
    consumer_group: Option<&'a str>,
    success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dlq: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<&'a str>,
}

/// Parses one ack object; `group` is the body-level consumer group.
pub fn parse_one(value: &Value, path: &str, index: usize, group: Option<&str>) -> AckIn {
    let o = Obj::new(value, path);
    let transaction_id = o.req_str("transactionId");
    if transaction_id.is_empty() {
        errors::invalid(&o.field("transactionId"), "must not be empty");
    }
    if transaction_id.len() > MAX_NAME_BYTES {
        errors::too_long(
            &o.field("transactionId"),
            transaction_id.len(),
            MAX_NAME_BYTES,
        );
    }
    let partition_id = match o.get("partitionId") {
        Some(v) => as_i64(&o.field("partitionId"), v),
        None => errors::invalid(&o.field("partitionId"), "is required"),
    };
    let status = Status::parse(
        &o.field("status"),
        o.opt_str("status").unwrap_or("completed"),
    );
    let lease_id = o
        .opt_str("leaseId")
        .filter(|s| !s.is_empty())
        .map(|s| parse_uuid(&o.field("leaseId"), s));
    let group = o
        .opt_str("consumerGroup")
        .or(group)
        .map(|g| check_name(&o.field("consumerGroup"), g))
        .unwrap_or(QUEUE_MODE)
        .to_owned();
    let error = o.opt_str("error").map(str::to_owned);
    AckIn {
        index,
        transaction_id: transaction_id.to_owned(),
        partition_id,
        status,
        lease_id,
        group,
        error,
    }
}

/// The fields of an ack, typed, borrowed from the body's text.
#[derive(serde::Deserialize)]
struct TypedAck<'a> {
    #[serde(borrow, rename = "transactionId")]
    transaction_id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "partitionId")]
    partition_id: Option<&'a RawValue>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "leaseId")]
    lease_id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "consumerGroup")]
    consumer_group: Option<Cow<'a, str>>,
    #[serde(borrow)]
    error: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct TypedWrapper<'a> {
    #[serde(borrow)]
    acknowledgments: Vec<TypedAck<'a>>,
    #[serde(borrow, default, rename = "consumerGroup")]
    consumer_group: Option<Cow<'a, str>>,
}

/// Reads an ack body (an array of acks, or the `acknowledgments` wrapper)
/// in one typed pass, without building a value tree. None for anything it
/// does not take as it stands: the tree path then reads it, and names what
/// is wrong.
pub(crate) fn parse_typed(text: &str) -> Option<Vec<AckIn>> {
    let (items, group): (Vec<TypedAck>, Option<Cow<str>>) =
        match text.trim_start().as_bytes().first()? {
            b'[' => (serde_json::from_str(text).ok()?, None),
            b'{' => {
                let w: TypedWrapper = serde_json::from_str(text).ok()?;
                (w.acknowledgments, w.consumer_group)
            }
            _ => return None,
        };
    if items.is_empty() || items.len() > crate::pg::settings::ack_max_items() {
        return None;
    }
    let valid_name = |s: &str| !s.is_empty() && s.len() <= MAX_NAME_BYTES;
    items
        .into_iter()
        .enumerate()
        .map(|(index, a)| {
            let transaction_id = a.transaction_id.filter(|t| valid_name(t))?.into_owned();
            let raw = a.partition_id?.get();
            let partition_id = match raw.strip_prefix('"') {
                Some(quoted) => quoted
                    .strip_suffix('"')
                    .filter(|d| !d.contains('\\'))?
                    .parse::<i64>()
                    .ok()?,
                // serde_json reads -0 as a float, which the tree refuses.
                None if raw != "-0" => raw.parse::<i64>().ok()?,
                None => return None,
            };
            let status = Status::from_name(a.status.as_deref().unwrap_or("completed"))?;
            let lease_id = match a.lease_id.as_deref().filter(|l| !l.is_empty()) {
                Some(l) => Some(uuid::Uuid::parse_str(l).ok()?),
                None => None,
            };
            let group = match a.consumer_group.as_deref().or(group.as_deref()) {
                Some(g) if valid_name(g) => g.to_owned(),
                Some(_) => return None,
                None => QUEUE_MODE.to_owned(),
            };
            let error = a.error.map(Cow::into_owned);
            Some(AckIn {
                index,
                transaction_id,
                partition_id,
                status,
                lease_id,
                group,
                error,
            })
        })
        .collect()
}

/// Parses an ack body given as JSON text; see `parse_acks`.
pub fn parse_acks_text(text: &str) -> Vec<AckIn> {
    if let Some(acks) = parse_typed(text) {
        return acks;
    }
    let body: Value = crate::wire::json::parse_value("acks", text);
    parse_acks(&body)
}

/// The answers of an ack as JSON text: the array `AckAnswer` serializes to,
/// written field by field.
pub fn answers_json(out: &[AckOut]) -> String {
    use crate::wire::json::{array_text, write_int, write_opt_str, write_str};
    let capacity = out
        .iter()
        .map(|o| 140 + o.transaction_id.len() + o.group.len())
        .sum();
    array_text(out, capacity, |text, o| {
        text.push_str("{\"index\":");
        write_int(text, o.index as i64);
        text.push_str(",\"transactionId\":");
        write_str(text, &o.transaction_id);
        text.push_str(",\"partitionId\":\"");
        write_int(text, o.partition_id);
        text.push_str("\",\"status\":\"");
        text.push_str(o.status.as_str());
        text.push_str("\",\"consumerGroup\":");
        write_opt_str(text, (o.group != QUEUE_MODE).then_some(o.group.as_str()));
        text.push_str(if o.success() {
            ",\"success\":true"
        } else {
            ",\"success\":false"
        });
        if let Some(e) = &o.error {
            text.push_str(",\"error\":");
            write_str(text, e);
        }
        if o.dead_lettered {
            text.push_str(",\"dlq\":true");
        }
        if let Some(w) = &o.warning {
            text.push_str(",\"warning\":");
            write_str(text, w);
        }
        text.push('}');
    })
}

/// Parses an ack body: one ack object, an array of them, or
/// `{"acknowledgments": [...], "consumerGroup": ...}`.
pub fn parse_acks(body: &Value) -> Vec<AckIn> {
    let (items, group): (Vec<&Value>, Option<&str>) = match body {
        Value::Array(a) => (a.iter().collect(), None),
        Value::Object(m) if m.contains_key("acknowledgments") => {
            let o = Obj::new(body, "");
            let list = o
                .opt_array("acknowledgments")
                .unwrap_or_else(|| errors::invalid("acknowledgments", "is required"));
            let group = o.opt_str("consumerGroup");
            (list.iter().collect(), group)
        }
        Value::Object(_) => (vec![body], None),
        _ => errors::wrong_type("acks", "an ack object or an array of them"),
    };
    if items.is_empty() {
        errors::invalid("acknowledgments", "must not be empty");
    }
    let max = crate::pg::settings::ack_max_items();
    if items.len() > max {
        errors::invalid(
            "acknowledgments",
            format!(
                "{} acks is more than queen.ack_max_items ({max})",
                items.len()
            ),
        );
    }
    items
        .iter()
        .enumerate()
        .map(|(i, v)| parse_one(v, &format!("acknowledgments[{i}]"), i, group))
        .collect()
}

struct ConsumerRow {
    queue_id: i64,
    committed: i64,
    lease_id: Option<uuid::Uuid>,
    lease_start: i64,
    lease_end: i64,
    state: Vec<u8>,
    head_offset: Option<i64>,
    head_attempts: i32,
    retry_limit: i32,
    retry_delay_ms: i32,
}

/// A sidecar row: its base offset and the hashes of its transaction ids.
type SidecarRow = (i64, Vec<Option<i64>>);

/// Locks the consumer row of (pid, group) and reads, in the same statement,
/// the sidecar rows covering its lease (none when it holds no lease); None
/// when the group has no cursor on the partition. The locked row is
/// materialized first, so the sidecar is read for the lease the row holds
/// once the lock is granted (after waiting on another ack or a pop, the row
/// as that transaction left it). The read uses the statement's snapshot: a
/// lease granted meanwhile may cover messages pushed after it, but no one
/// acking now can hold those, and what is not found counts as not acked.
fn lock_consumer(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
) -> Option<(ConsumerRow, Vec<SidecarRow>)> {
    const SQL: &str = query!("ack_lock_consumer");
    let mut consumer: Option<ConsumerRow> = None;
    let mut covering = Vec::new();
    for row in exec(
        client,
        SQL,
        &[spi::INT8, spi::TEXT],
        &[pid.into(), group.into()],
    ) {
        if consumer.is_none() {
            let lease: Option<pgrx::Uuid> = spi::opt(&row, "lease_id");
            consumer = Some(ConsumerRow {
                queue_id: spi::col(&row, "queue_id"),
                committed: spi::col(&row, "committed"),
                lease_id: lease.map(|l| uuid::Uuid::from_bytes(*l.as_bytes())),
                lease_start: spi::opt::<i64>(&row, "lease_start").unwrap_or(0),
                lease_end: spi::opt::<i64>(&row, "lease_end").unwrap_or(-1),
                state: row.get::<Vec<u8>>(5).unwrap().unwrap_or_default(),
                head_offset: spi::opt(&row, "head_offset"),
                head_attempts: spi::col(&row, "head_attempts"),
                retry_limit: spi::col(&row, "retry_limit"),
                retry_delay_ms: spi::col(&row, "retry_delay"),
            });
        }
        if let Some(base) = spi::opt::<i64>(&row, "base_offset") {
            covering.push((base, row.get::<Vec<Option<i64>>>(12).unwrap().unwrap()));
        }
    }
    consumer.map(|c| (c, covering))
}

/// Where to look up a transaction id outside the lease (the lease's own
/// rows are read with its cursor).
#[derive(Clone, Copy)]
enum Lookup {
    /// The index of caller-supplied ids (kept where the queue has a dedup
    /// window).
    Supplied,
    /// The newest rows at or below an offset (an id the engine minted, or a
    /// caller's id on a queue without a dedup window, acked again after it
    /// was done), at most `queen.ack_lookback_segments` of them.
    Before(i64),
}

/// The sidecar rows of partition $1 whose caller ids hash to one of $2. The
/// partition filters what the hash index finds (`+ 0` keeps it off the
/// primary key, whose range would be every row of it).
pub(crate) const SUPPLIED_LOOKUP: &str = query!("ack_supplied_lookup");

/// Offsets of the transaction ids found by `how`.
fn resolve<'a>(
    client: &mut SpiClient<'_>,
    pid: i64,
    txns: &[&'a str],
    how: Lookup,
) -> HashMap<&'a str, i64> {
    let wanted = by_hash(txns);
    let rows = match how {
        Lookup::Supplied => exec(
            client,
            SUPPLIED_LOOKUP,
            &[spi::INT8, spi::INT8_ARRAY],
            &[
                pid.into(),
                wanted.keys().copied().collect::<Vec<i64>>().into(),
            ],
        ),
        Lookup::Before(at) => exec(
            client,
            query!("ack_resolve"),
            &[spi::INT8, spi::INT8, spi::INT8],
            &[
                pid.into(),
                at.into(),
                crate::pg::settings::ack_lookback_segments().into(),
            ],
        ),
    };
    let rows = rows.map(|row| {
        (
            spi::col::<i64>(&row, "base_offset"),
            row.get::<Vec<Option<i64>>>(2).unwrap().unwrap(),
        )
    });
    // The newest occurrence wins: a message pushed again under its id (a
    // dead letter retried) is the one the consumer holds now.
    match_hashes(rows, &wanted, None)
        .into_iter()
        .map(|(t, at)| (t, *at.last().expect("a match has an offset")))
        .collect()
}

/// The transaction ids `txns` by their sidecar hash.
fn by_hash<'a>(txns: &[&'a str]) -> HashMap<i64, &'a str> {
    txns.iter().map(|t| (txn_hash(t), *t)).collect()
}

/// Every offset of each of the `wanted` ids among sidecar rows
/// `(base_offset, txn_hashes)`, ascending, only those inside `range` (lo, hi)
/// when one is given. An id can sit at several offsets where nothing
/// deduplicated it (a queue without a dedup window).
fn match_hashes<'a>(
    rows: impl Iterator<Item = (i64, Vec<Option<i64>>)>,
    wanted: &HashMap<i64, &'a str>,
    range: Option<(i64, i64)>,
) -> HashMap<&'a str, Vec<i64>> {
    let mut out: HashMap<&'a str, Vec<i64>> = HashMap::new();
    for (base, hashes) in rows {
        for (i, h) in hashes.into_iter().enumerate() {
            let offset = base + i as i64;
            if let Some(t) = h.and_then(|h| wanted.get(&h)) {
                if range.is_none_or(|(lo, hi)| offset >= lo && offset <= hi) {
                    out.entry(*t).or_default().push(offset);
                }
            }
        }
    }
    // Rows cover disjoint ranges, so no offset comes twice.
    for at in out.values_mut() {
        at.sort_unstable();
    }
    out
}

/// Acks as one SQL call makes them: when they are the first thing their
/// transaction writes, the commit may skip the WAL flush (`soft_commit`).
pub fn ack_in_call(client: &mut SpiClient<'_>, acks: &[AckIn]) -> Vec<AckOut> {
    let first_writer = soft_commit::nothing_written();
    let out = ack(client, acks);
    if first_writer && !soft_commit::nothing_written() {
        soft_commit::soft_written(Soft::Ack);
    }
    out
}

/// Applies the acks; one answer per ack, in request order.
pub fn ack(client: &mut SpiClient<'_>, acks: &[AckIn]) -> Vec<AckOut> {
    let mut by_cursor: BTreeMap<(i64, &str), Vec<&AckIn>> = BTreeMap::new();
    for a in acks {
        by_cursor
            .entry((a.partition_id, a.group.as_str()))
            .or_default()
            .push(a);
    }
    let mut out: Vec<AckOut> = Vec::with_capacity(acks.len());
    for ((pid, group), items) in by_cursor {
        out.extend(ack_cursor(client, pid, group, &items));
    }
    out.sort_by_key(|o| o.index);
    out
}

/// The answer to `a` before anything is applied: `error` refuses it.
fn answer(a: &AckIn, error: Option<String>) -> AckOut {
    AckOut {
        index: a.index,
        transaction_id: a.transaction_id.clone(),
        partition_id: a.partition_id,
        status: a.status,
        group: a.group.clone(),
        error,
        dead_lettered: false,
        offset: None,
        warning: None,
    }
}

/// Where the acked ids sit: the offsets of each in the current lease, and
/// the offset of the others outside it (an already done message is answered
/// as done), looked up by the ids the pushes supplied, then before the
/// cursor.
fn locate<'a>(
    client: &mut SpiClient<'_>,
    pid: i64,
    c: &ConsumerRow,
    covering: Vec<SidecarRow>,
    txns: &[&'a str],
) -> (HashMap<&'a str, Vec<i64>>, HashMap<&'a str, i64>) {
    // No rows cover a cursor that holds no lease.
    let in_lease = match_hashes(
        covering.into_iter(),
        &by_hash(txns),
        Some((c.lease_start, c.lease_end)),
    );
    let mut outside: HashMap<&str, i64> = HashMap::new();
    for how in [Lookup::Supplied, Lookup::Before(c.committed)] {
        let missing: Vec<&str> = txns
            .iter()
            .copied()
            .filter(|t| !in_lease.contains_key(*t) && !outside.contains_key(*t))
            .collect();
        if missing.is_empty() {
            break;
        }
        outside.extend(resolve(client, pid, &missing, how));
    }
    (in_lease, outside)
}

/// Whether the ack `a` of the message at `offset` may change it: the
/// message is in the group's current lease, and the ack names that lease
/// (or none).
fn check_held(
    a: &AckIn,
    c: &ConsumerRow,
    offset: i64,
    pid: i64,
    group: &str,
) -> Result<(), String> {
    match (a.lease_id, c.lease_id) {
        (_, None) => Err(format!("message at offset {offset} of partition {pid} is not leased to consumer group {group:?}")),
        (Some(mine), Some(cur)) if mine != cur => Err(format!(
            "lease {mine} is not held: the batch was leased again after it expired (current lease {cur})"
        )),
        _ if offset < c.lease_start || offset > c.lease_end => {
            Err(format!("message at offset {offset} of partition {pid} is not in the current lease"))
        }
        _ => Ok(()),
    }
}

/// Marks the leased message at `offset` as the ack says (a dead-lettering
/// writes its row first) and answers it.
fn mark(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    c: &mut ConsumerRow,
    a: &AckIn,
    offset: i64,
) -> AckOut {
    let i = (offset - c.lease_start) as usize;
    let mut out = answer(a, None);
    out.offset = Some(offset);
    c.state[i] = match a.status {
        Status::Completed => DONE,
        Status::Dlq => {
            let failed = dlq::Failed {
                queue_id: c.queue_id,
                pid,
                group,
                offset,
                transaction_id: Some(&a.transaction_id),
                error: a.error.as_deref(),
                attempts: c.head_attempts.max(1),
            };
            if dlq::write(client, &failed) {
                out.dead_lettered = true;
            } else {
                out.warning = Some(dlq::gone(pid, offset));
            }
            DONE
        }
        Status::Failed => FAILED,
        Status::Retry => RETRY,
    };
    out
}

/// Applies the acks of one (partition, group) cursor, under its row lock.
fn ack_cursor(client: &mut SpiClient<'_>, pid: i64, group: &str, items: &[&AckIn]) -> Vec<AckOut> {
    let Some((mut c, covering)) = lock_consumer(client, pid, group) else {
        let msg = format!("partition {pid} has no cursor for consumer group {group:?}: nothing was delivered to it");
        return items.iter().map(|a| answer(a, Some(msg.clone()))).collect();
    };
    let txns: Vec<&str> = items.iter().map(|a| a.transaction_id.as_str()).collect();
    let (in_lease, outside) = locate(client, pid, &c, covering, &txns);
    let mut results = Vec::with_capacity(items.len());
    let mut errors_at: HashMap<i64, Option<String>> = HashMap::new();
    let mut dirty = false;
    for a in items {
        // An id at several offsets of the lease: each ack takes the first
        // one not answered yet, so acking every message delivered under it
        // answers each once (an ack of an id whose every copy is answered
        // answers the newest again).
        let offset = match in_lease.get(a.transaction_id.as_str()) {
            Some(at) => Some(
                at.iter()
                    .copied()
                    .find(|o| c.state.get((o - c.lease_start) as usize) == Some(&OPEN))
                    .unwrap_or(at[at.len() - 1]),
            ),
            None => outside.get(a.transaction_id.as_str()).copied(),
        };
        let Some(offset) = offset else {
            results.push(answer(a, Some(format!(
                "transaction id {:?} is not known in partition {pid} (never pushed, or its record was purged); not acknowledged",
                a.transaction_id
            ))));
            continue;
        };
        if offset <= c.committed {
            // Already done for this group: acknowledging again changes nothing.
            results.push(answer(a, None));
            continue;
        }
        if let Err(e) = check_held(a, &c, offset, pid, group) {
            results.push(answer(a, Some(e)));
            continue;
        }
        results.push(mark(client, pid, group, &mut c, a, offset));
        errors_at.insert(offset, a.error.clone());
        dirty = true;
    }
    if dirty {
        settle(client, pid, group, &mut c, &errors_at, &mut results);
    }
    results
}

/// Moves the committed offset past every done message of a fully answered
/// lease.
fn advance(c: &mut ConsumerRow) {
    while c.committed < c.lease_end && c.state[(c.committed + 1 - c.lease_start) as usize] == DONE {
        c.committed += 1;
    }
}

/// The new head of a fully answered lease: failures past their retry limit
/// are dead-lettered and passed, the first one left is the head (with its
/// attempts) and is delivered again after the retry delay (at once for a
/// retry). None when the whole lease is done.
fn next_head(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    c: &mut ConsumerRow,
    errors_at: &HashMap<i64, Option<String>>,
    results: &mut [AckOut],
) -> ((Option<i64>, i32), Option<i32>) {
    let mut retry_in_ms: Option<i32> = None;
    let head: (Option<i64>, i32);
    loop {
        if c.committed >= c.lease_end {
            head = (None, 0);
            break;
        }
        let f = c.committed + 1;
        let kind = c.state[(f - c.lease_start) as usize];
        let attempts = if c.head_offset == Some(f) {
            c.head_attempts
        } else {
            c.head_attempts.max(1)
        };
        if attempts > c.retry_limit {
            let error = errors_at.get(&f).cloned().flatten();
            let error =
                error.unwrap_or_else(|| format!("retries exhausted after {attempts} deliveries"));
            let failed = dlq::Failed {
                queue_id: c.queue_id,
                pid,
                group,
                offset: f,
                transaction_id: None,
                error: Some(&error),
                attempts,
            };
            let written = dlq::write(client, &failed);
            for r in results.iter_mut().filter(|r| r.offset == Some(f)) {
                r.dead_lettered = written;
                if !written {
                    r.warning = Some(dlq::gone(pid, f));
                }
            }
            c.state[(f - c.lease_start) as usize] = DONE;
            advance(c);
            continue;
        }
        retry_in_ms = Some(if kind == RETRY { 0 } else { c.retry_delay_ms });
        head = (Some(f), attempts);
        break;
    }
    (head, retry_in_ms)
}

/// Moves the cursor over the done prefix of the lease and, once every
/// message of the lease is answered, ends the lease: redelivery of the first
/// failure after the retry delay, or dead-lettering it when its retries are
/// exhausted.
fn settle(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    c: &mut ConsumerRow,
    errors_at: &HashMap<i64, Option<String>>,
    results: &mut [AckOut],
) {
    advance(c);
    let answered = c.state.iter().all(|s| *s != OPEN);
    if answered {
        let (head, retry_in_ms) = next_head(client, pid, group, c, errors_at, results);
        exec(
            client,
            query!("ack_settle_retry"),
            &[
                spi::INT8,
                spi::TEXT,
                spi::INT8,
                spi::INT8,
                spi::INT4,
                spi::INT4,
            ],
            &[
                pid.into(),
                group.into(),
                c.committed.into(),
                head.0.into(),
                head.1.into(),
                retry_in_ms.into(),
            ],
        );
    } else {
        exec(
            client,
            query!("ack_settle_advance"),
            &[spi::INT8, spi::TEXT, spi::INT8, spi::BYTEA],
            &[
                pid.into(),
                group.into(),
                c.committed.into(),
                c.state.clone().into(),
            ],
        );
    }
}

/// Extends every partition lease held under `lease_id`, by `seconds` or by
/// each queue's lease time.
pub fn renew(client: &mut SpiClient<'_>, lease_id: &str, seconds: Option<i32>) -> Value {
    let id = parse_uuid("lease_id", lease_id);
    if let Some(s) = seconds {
        if s <= 0 {
            errors::invalid("seconds", format!("{s} must be at least 1"));
        }
    }
    let rows = exec(
        client,
        query!("ack_renew"),
        &[spi::UUID, spi::INT4],
        &[
            pgrx::Uuid::from_bytes(*id.as_bytes()).into(),
            seconds.into(),
        ],
    );
    let expiries: Vec<i64> = rows
        .map(|r| spi::col::<i64>(&r, "lease_expires_us"))
        .collect();
    let renewed = expiries.len();
    let expires = expiries
        .iter()
        .max()
        .map(|us| crate::pg::time::micros_to_iso(*us));
    let mut v = json!({
        "leaseId": id.to_string(),
        "success": renewed > 0,
        "renewed": renewed,
        "newExpiresAt": expires,
        "expiresAt": expires,
    });
    if renewed == 0 {
        v["error"] = Value::String(format!(
            "lease {id} is not held (expired, released by an ack, or never existed)"
        ));
    }
    v
}
