//! The read path: claim partitions for a consumer group, lease a batch from
//! each, and decode its messages from the segments.
//!
//! A partition leased to one consumer of a group is skipped by the others:
//! its `log_consumers` row is taken with SKIP LOCKED (a pop never waits on a
//! lock) and its lease must be free or expired. Everything a pop hands out is
//! one lease id, whatever the number of partitions it claimed.

use pgrx::spi::SpiClient;
use queen_frames::pop_body::{PopAnswer, PopClaim, PopRecord, CODEC_ZSTD};
use serde_json::Value;

use crate::catalog::queues;
use crate::engine::segments::{self, Scan, Segment};
use crate::engine::soft_commit::{self, Soft};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;
use crate::wire::json::{check_name, Obj};
use crate::wire::QUEUE_MODE;

/// How a new consumer group's cursor starts on a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscription {
    /// From the oldest message still kept.
    All,
    /// From messages written after the group first subscribed.
    New,
    /// From messages written at or after the timestamp (ISO 8601 text).
    From(String),
}

#[derive(Debug, Clone)]
pub struct PopRequest {
    pub queue: Option<String>,
    pub partition: Option<String>,
    pub group: String,
    pub batch: i64,
    pub partitions: i64,
    pub auto_ack: bool,
    pub subscription: Subscription,
    pub namespace: Option<String>,
    pub task: Option<String>,
}

impl PopRequest {
    pub fn parse(
        queue: Option<&str>,
        partition: Option<&str>,
        consumer_group: Option<&str>,
        batch: i32,
        options: &Value,
    ) -> PopRequest {
        let o = Obj::new(options, "options");
        let queue = queue.map(|q| check_name("queue", q).to_owned());
        let partition = partition.map(|p| check_name("partition", p).to_owned());
        let group = consumer_group
            .map(|g| check_name("consumer_group", g))
            .unwrap_or(QUEUE_MODE)
            .to_owned();
        let max_batch = settings::pop_max_batch();
        if batch <= 0 {
            errors::invalid("batch", format!("{batch} must be at least 1"));
        }
        if batch as i64 > max_batch {
            errors::invalid(
                "batch",
                format!("{batch} is more than queen.pop_max_batch ({max_batch})"),
            );
        }
        let partitions = o.opt_i64("partitions").unwrap_or(1);
        let max_parts = settings::pop_max_partitions();
        if partitions <= 0 || partitions > max_parts {
            errors::invalid(
                &o.field("partitions"),
                format!("{partitions} is not between 1 and queen.pop_max_partitions ({max_parts})"),
            );
        }
        let namespace = o.opt_name("namespace").map(str::to_owned);
        let task = o.opt_name("task").map(str::to_owned);
        if queue.is_none() && namespace.is_none() && task.is_none() {
            errors::invalid(
                "queue",
                "is required unless options.namespace or options.task is given",
            );
        }
        if queue.is_none() && partition.is_some() {
            errors::invalid("partition", "needs a queue");
        }
        let from = o.opt_str("subscriptionFrom").filter(|s| !s.is_empty());
        let subscription = match (o.opt_str("subscriptionMode"), from) {
            (_, Some("now")) => Subscription::New,
            (_, Some(ts)) => {
                let looks_like_date = ts.len() >= 10
                    && ts.as_bytes()[..4].iter().all(u8::is_ascii_digit)
                    && ts.as_bytes()[4] == b'-';
                if !looks_like_date {
                    errors::invalid(
                        &o.field("subscriptionFrom"),
                        format!("{ts:?} is not 'now' or an ISO 8601 timestamp"),
                    );
                }
                Subscription::From(ts.to_owned())
            }
            (None | Some("all") | Some(""), None) => Subscription::All,
            (Some("new") | Some("new-only") | Some("latest"), None) => Subscription::New,
            (Some(other), None) => errors::invalid(
                &o.field("subscriptionMode"),
                format!("{other:?} is not one of all, new"),
            ),
        };
        PopRequest {
            queue,
            partition,
            group,
            batch: batch as i64,
            partitions,
            auto_ack: o.opt_bool("autoAck").unwrap_or(false),
            subscription,
            namespace,
            task,
        }
    }
}

/// What one claimed partition handed out.
pub struct Claim {
    pub partition_id: i64,
    pub partition: String,
    pub queue: String,
    pub start: i64,
    pub end: i64,
    pub delivery_attempt: i32,
    pub segments: Vec<Segment>,
}

pub struct PopOut {
    pub lease_id: Option<uuid::Uuid>,
    pub group: String,
    pub claims: Vec<Claim>,
}

struct Candidate {
    pid: i64,
    name: String,
    queue_idx: usize,
    log_start: i64,
    fresh: bool,
}

/// What a pop needs of a queue: its identity and the three options that
/// shape a pop, read as columns (not the whole option set).
pub struct PopQueue {
    pub id: i64,
    pub name: String,
    pub window_buffer: i32,
    pub delayed_processing: i32,
    pub lease_time: i32,
}

impl PopQueue {
    /// The queue in the columns queue_id, queue, window_buffer,
    /// delayed_processing and lease_time of `row`.
    fn from_row(row: &pgrx::spi::SpiHeapTupleData<'_>) -> PopQueue {
        PopQueue {
            id: spi::col(row, "queue_id"),
            name: spi::col(row, "queue"),
            window_buffer: spi::col(row, "window_buffer"),
            delayed_processing: spi::col(row, "delayed_processing"),
            lease_time: spi::col(row, "lease_time"),
        }
    }
}

/// The queues of a namespace/task pop, highest priority first.
fn namespace_queues(client: &mut SpiClient<'_>, req: &PopRequest) -> Vec<PopQueue> {
    exec(
        client,
        query!("pop_namespace_queues"),
        &[spi::UUID, spi::TEXT, spi::TEXT],
        &[
            queues::default_tenant().into(),
            req.namespace.as_deref().into(),
            req.task.as_deref().into(),
        ],
    )
    .map(|r| PopQueue::from_row(&r))
    .collect()
}

/// A named queue and its candidate partitions in one statement, and the
/// transaction's now() (µs). A queue that does not exist yet is created
/// (a pop names a queue into being, with default options) and has none.
fn named_candidates(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    name: &str,
) -> (Vec<PopQueue>, i64, Vec<Candidate>) {
    const SQL: &str = query!("pop_named_candidates");
    let limit = req.partitions * settings::pop_candidates();
    let rows = exec(
        client,
        SQL,
        &[spi::UUID, spi::TEXT, spi::TEXT, spi::TEXT, spi::INT8],
        &[
            queues::default_tenant().into(),
            name.into(),
            req.group.as_str().into(),
            req.partition.as_deref().into(),
            limit.into(),
        ],
    );
    let mut queue: Option<PopQueue> = None;
    let mut now_us = 0;
    let mut cands = Vec::new();
    for r in rows {
        if queue.is_none() {
            queue = Some(PopQueue::from_row(&r));
            now_us = spi::col(&r, "now_us");
        }
        if let Some(pid) = spi::opt::<i64>(&r, "id") {
            cands.push(Candidate {
                pid,
                name: spi::col(&r, "name"),
                queue_idx: 0,
                log_start: spi::col(&r, "log_start"),
                fresh: spi::col(&r, "fresh"),
            });
        }
    }
    match queue {
        Some(q) => (vec![q], now_us, cands),
        None => {
            queues::insert(
                client,
                name,
                &crate::catalog::options::QueueOptions::default(),
            );
            (Vec::new(), now_us, cands)
        }
    }
}

/// The partitions worth trying across `qs`, and the transaction's now()
/// (µs), read in the same statement.
fn candidates(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    qs: &[PopQueue],
) -> (i64, Vec<Candidate>) {
    const SQL: &str = query!("pop_candidates");
    let ids: Vec<i64> = qs.iter().map(|q| q.id).collect();
    let windows: Vec<i32> = qs.iter().map(|q| q.window_buffer).collect();
    let limit = req.partitions * settings::pop_candidates();
    let rows = exec(
        client,
        SQL,
        &[
            spi::INT8_ARRAY,
            spi::INT4_ARRAY,
            spi::TEXT,
            spi::TEXT,
            spi::INT8,
        ],
        &[
            ids.into(),
            windows.into(),
            req.group.as_str().into(),
            req.partition.as_deref().into(),
            limit.into(),
        ],
    );
    let mut now_us = 0;
    let cands = rows
        .map(|r| {
            let qid: i64 = spi::col(&r, "queue_id");
            now_us = spi::col(&r, "now_us");
            Candidate {
                pid: spi::col(&r, "id"),
                name: spi::col(&r, "name"),
                queue_idx: qs
                    .iter()
                    .position(|q| q.id == qid)
                    .expect("candidate of a target queue"),
                log_start: spi::col(&r, "log_start"),
                fresh: spi::col(&r, "fresh"),
            }
        })
        .collect();
    (now_us, cands)
}

/// Takes a transaction-scoped advisory lock on (`what`, `id`, `group`)
/// without waiting. It stands in front of the inserts that create a cursor or
/// a group row: an insert that conflicts with another transaction's
/// uncommitted insert would wait for it, and a pop never waits.
fn try_creation_lock(client: &mut SpiClient<'_>, what: u32, id: i64, group: &str) -> bool {
    // The two-int4 key space is separate from the bigint keys of the
    // maintenance locks; a collision only makes a pop skip a candidate.
    let k1 = (xxhash_rust::xxh3::xxh3_64(group.as_bytes()) as u32 ^ what) as i32;
    let k2 = (id as u64 ^ (id as u64 >> 32)) as u32 as i32;
    exec(
        client,
        "SELECT pg_try_advisory_xact_lock($1, $2)",
        &[spi::INT4, spi::INT4],
        &[k1.into(), k2.into()],
    )
    .next()
    .and_then(|r| spi::opt::<bool>(&r, "pg_try_advisory_xact_lock"))
    .unwrap_or(false)
}

const LOCK_CURSOR: u32 = 0x5155_0001;
const LOCK_GROUP: u32 = 0x5155_0002;

/// The cursor (last done offset) a new consumer row starts from; None when
/// another pop is registering the group right now.
fn initial_committed(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    queue_id: i64,
    pid: i64,
    log_start: i64,
) -> Option<i64> {
    if req.group == QUEUE_MODE {
        return Some(log_start - 1);
    }
    let registered = exec(
        client,
        query!("pop_group_registered"),
        &[spi::INT8, spi::TEXT],
        &[queue_id.into(), req.group.as_str().into()],
    )
    .next()
    .is_some();
    if !registered && !try_creation_lock(client, LOCK_GROUP, queue_id, &req.group) {
        return None;
    }
    let (mode, from): (&str, Option<&str>) = match &req.subscription {
        Subscription::All => ("all", None),
        Subscription::New => ("new", None),
        Subscription::From(ts) => ("timestamp", Some(ts.as_str())),
    };
    exec(
        client,
        query!("pop_subscribe"),
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::TEXT],
        &[
            queue_id.into(),
            req.group.as_str().into(),
            mode.into(),
            from.into(),
        ],
    );
    // The group's stored subscription wins over this request's.
    let row = exec(
        client,
        query!("pop_subscription_start"),
        &[spi::INT8, spi::TEXT],
        &[queue_id.into(), req.group.as_str().into()],
    )
    .next()
    .expect("group row exists after insert");
    let since: Option<pgrx::datum::TimestampWithTimeZone> = spi::opt(&row, "since");
    let Some(since) = since else {
        return Some(log_start - 1);
    };
    // created_at never decreases with the offset: the newest segment written
    // before `since` ends where the group starts.
    let before = exec(
        client,
        query!("pop_segment_before"),
        &[spi::INT8, spi::TIMESTAMPTZ],
        &[pid.into(), since.into()],
    )
    .next()
    .map(|r| spi::col::<i64>(&r, "end_offset"));
    Some(before.unwrap_or(-1).max(log_start - 1))
}

struct Cursor {
    /// The first offset to hand out: the one after the last done, or the
    /// partition's log start when the cursor is below it (those offsets are
    /// gone).
    from: i64,
    head_offset: Option<i64>,
    head_attempts: i32,
}

/// Segments one scan reads at most (only those the batch needs are read);
/// not measured, a round number that covers a batch of 100 single-message
/// pushes in two round trips.
const SCAN_CHUNK: i64 = 64;

/// Takes the consumer row of (pid, group) without waiting, and only when its
/// lease is free, and reads the first segments of a batch of `want` from its
/// `from`, in one statement; None when another consumer holds the row.
fn take_cursor(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    log_start: i64,
    want: i64,
) -> Option<(Cursor, Scan)> {
    const SQL: &str = query!("pop_take_cursor");
    let rows = exec(
        client,
        SQL,
        &[spi::INT8, spi::TEXT, spi::INT8, spi::INT8, spi::INT8],
        &[
            pid.into(),
            group.into(),
            log_start.into(),
            want.into(),
            SCAN_CHUNK.into(),
        ],
    );
    let mut cursor: Option<Cursor> = None;
    let mut segs = Vec::new();
    for row in rows {
        if cursor.is_none() {
            cursor = Some(Cursor {
                head_offset: spi::opt(&row, "head_offset"),
                head_attempts: spi::col(&row, "head_attempts"),
                from: spi::col(&row, "from_offset"),
            });
        }
        segs.extend(Segment::from_columns(&row));
    }
    let cursor = cursor?;
    let scan = Scan::of(segs.into_iter(), cursor.from, SCAN_CHUNK);
    Some((cursor, scan))
}

/// Segments holding offsets from `from`, up to `want` messages, stopping at
/// the first segment younger than the queue's delayed-processing horizon;
/// `first` is what the first scan from `from` read.
fn read_batch(
    client: &mut SpiClient<'_>,
    pid: i64,
    from: i64,
    want: i64,
    visible_before_us: Option<i64>,
    first: Scan,
) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    let mut next = from;
    let mut have = 0i64;
    let mut scan = first;
    loop {
        let more = scan.more && !scan.segments.is_empty();
        for seg in scan.segments {
            if visible_before_us.is_some_and(|t| seg.created_at_us > t) {
                return out;
            }
            let first = seg.base_offset.max(next);
            have += seg.end_offset - first + 1;
            next = seg.end_offset + 1;
            out.push(seg);
            if have >= want {
                return out;
            }
        }
        if !more {
            return out;
        }
        scan = segments::scan_from(client, pid, next, want - have, SCAN_CHUNK);
    }
}

/// A pop as one SQL call makes it: when it is the first thing its
/// transaction writes and it takes a lease, the commit may skip the WAL
/// flush (`soft_commit`). An auto-acked pop moves a cursor for good and
/// always commits durably.
pub fn pop_in_call(client: &mut SpiClient<'_>, req: &PopRequest) -> PopOut {
    let first_writer = soft_commit::nothing_written();
    let out = pop(client, req);
    if first_writer && !req.auto_ack && !out.claims.is_empty() {
        soft_commit::soft_written(Soft::Lease);
    }
    out
}

/// Creates the group's cursor on a partition it never read, where its
/// subscription starts; false when another pop is creating it (or the group
/// row) right now.
fn create_cursor(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    queue: &PopQueue,
    cand: &Candidate,
) -> bool {
    if !try_creation_lock(client, LOCK_CURSOR, cand.pid, &req.group) {
        return false;
    }
    let Some(committed) = initial_committed(client, req, queue.id, cand.pid, cand.log_start) else {
        return false;
    };
    exec(
        client,
        query!("pop_create_cursor"),
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[cand.pid.into(), req.group.as_str().into(), committed.into()],
    );
    true
}

/// Hands `start..=end` out: under `lease` (its id and seconds), or, with
/// none (auto-ack), marked done at once.
fn move_cursor(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    lease: Option<(uuid::Uuid, i32)>,
    start: i64,
    end: i64,
    attempts: i32,
) {
    let Some((lease_id, lease_time)) = lease else {
        exec(
            client,
            query!("pop_release_cursor"),
            &[spi::INT8, spi::TEXT, spi::INT8],
            &[pid.into(), group.into(), end.into()],
        );
        return;
    };
    let state = vec![0u8; (end - start + 1) as usize];
    exec(
        client,
        query!("pop_lease_cursor"),
        &[
            spi::INT8,
            spi::TEXT,
            spi::INT8,
            spi::UUID,
            spi::INT4,
            spi::INT8,
            spi::INT8,
            spi::BYTEA,
            spi::INT4,
        ],
        &[
            pid.into(),
            group.into(),
            (start - 1).into(),
            pgrx::Uuid::from_bytes(*lease_id.as_bytes()).into(),
            lease_time.into(),
            start.into(),
            end.into(),
            state.into(),
            attempts.into(),
        ],
    );
}

pub fn pop(client: &mut SpiClient<'_>, req: &PopRequest) -> PopOut {
    let lease_id = (!req.auto_ack).then(uuid::Uuid::new_v4);
    let mut out = PopOut {
        lease_id,
        group: req.group.clone(),
        claims: Vec::new(),
    };
    let (qs, now_us, cands) = match &req.queue {
        Some(name) => named_candidates(client, req, name),
        None => {
            let qs = namespace_queues(client, req);
            if qs.is_empty() {
                return out;
            }
            let (now_us, cands) = candidates(client, req, &qs);
            (qs, now_us, cands)
        }
    };
    let mut remaining = req.batch;
    for cand in cands {
        if remaining == 0 || out.claims.len() as i64 >= req.partitions {
            break;
        }
        let queue = &qs[cand.queue_idx];
        if cand.fresh && !create_cursor(client, req, queue, &cand) {
            continue;
        }
        let Some((cursor, scan)) =
            take_cursor(client, cand.pid, &req.group, cand.log_start, remaining)
        else {
            continue;
        };
        let from = cursor.from;
        let delay = queue.delayed_processing as i64;
        let visible_before = (delay > 0).then(|| now_us - delay * 1_000_000);
        let segs = read_batch(client, cand.pid, from, remaining, visible_before, scan);
        let Some(first) = segs.first() else { continue };
        let start = first.base_offset.max(from);
        let last_seg_end = segs.last().unwrap().end_offset;
        let end = last_seg_end.min(start + remaining - 1);
        let attempts = if cursor.head_offset == Some(start) {
            cursor.head_attempts + 1
        } else {
            1
        };
        let lease = lease_id.map(|id| (id, queue.lease_time));
        move_cursor(client, cand.pid, &req.group, lease, start, end, attempts);
        remaining -= end - start + 1;
        out.claims.push(Claim {
            partition_id: cand.pid,
            partition: cand.name,
            queue: queue.name.clone(),
            start,
            end,
            delivery_attempt: attempts,
            segments: segs,
        });
    }
    out
}

impl PopOut {
    /// The JSON answer: `{"success", "queue", "partition", "partitionId",
    /// "leaseId", "consumerGroup", "partitionsClaimed", "messages": [...]}`,
    /// each message with id, transactionId, traceId, data, producerSub,
    /// createdAt, queue, partition, partitionId, offset, leaseId,
    /// consumerGroup, deliveryAttempt and retryCount. Written field by field
    /// into a buffer sized once (serde's struct machinery was 40% of a pop of
    /// 100). Payloads are copied as stored: every write path (JSON and
    /// binary pushes, packed frames, transactions, timers) refuses one that
    /// is not one JSON document, and checking again here was a third of
    /// writing the answer.
    pub fn to_json_text(&self) -> String {
        use crate::wire::json::{write_int, write_opt_str};
        let lease = self.lease_id.map(|l| l.to_string());
        let group = (self.group != QUEUE_MODE).then_some(self.group.as_str());
        // What every message of the answer repeats, written once.
        let mut tail = String::from(",\"leaseId\":");
        write_opt_str(&mut tail, lease.as_deref());
        tail.push_str(",\"consumerGroup\":");
        write_opt_str(&mut tail, group);
        let first = self.claims.first();
        // Sized once: the frames' bytes, and a message's fields around each.
        const PER_MESSAGE: usize = 300;
        let size: usize = self
            .claims
            .iter()
            .map(|c| {
                c.segments.iter().map(|s| s.raw().len()).sum::<usize>()
                    + PER_MESSAGE * (c.end - c.start + 1) as usize
            })
            .sum();
        let mut out = String::with_capacity(size + 256);
        out.push_str("{\"success\":true,\"queue\":");
        write_opt_str(&mut out, first.map(|c| c.queue.as_str()));
        out.push_str(",\"partition\":");
        write_opt_str(&mut out, first.map(|c| c.partition.as_str()));
        out.push_str(",\"partitionId\":");
        match first {
            Some(c) => {
                out.push('"');
                write_int(&mut out, c.partition_id);
                out.push('"');
            }
            None => out.push_str("null"),
        }
        out.push_str(&tail);
        out.push_str(",\"partitionsClaimed\":");
        write_int(&mut out, self.claims.len() as i64);
        out.push_str(",\"messages\":[");
        let mut written = 0usize;
        for c in &self.claims {
            write_claim(&mut out, c, &tail, &mut written);
        }
        out.push_str("]}");
        out
    }

    pub fn to_json(&self) -> Value {
        serde_json::from_str(&self.to_json_text()).expect("own answer parses")
    }

    /// The framed answer (QPF1): the stored segments as they are.
    pub fn to_frames(&self) -> Vec<u8> {
        let answer = PopAnswer {
            own_json: b"{\"frames\":true}".to_vec(),
            queue: self
                .claims
                .first()
                .map(|c| c.queue.clone())
                .unwrap_or_default(),
            lease_id: self.lease_id.map(|l| l.to_string()).unwrap_or_default(),
            consumer_group: self.group.clone(),
            claims: self
                .claims
                .iter()
                .map(|c| PopClaim {
                    partition_id: c.partition_id as u64,
                    partition: c.partition.clone(),
                    start: c.start as u64,
                    end: c.end as u64,
                    delivery_attempt: c.delivery_attempt as u32,
                    records: c
                        .segments
                        .iter()
                        .map(|s| PopRecord {
                            base_offset: s.base_offset as u64,
                            created_at_us: s.created_at_us,
                            count: s.count as u32,
                            codec: CODEC_ZSTD,
                            bytes: s.blob.clone(),
                        })
                        .collect(),
                })
                .collect(),
        };
        queen_frames::pop_body::encode_pop_answer(&answer)
            .unwrap_or_else(|e| errors::invalid("pop", e))
    }
}

/// Writes the messages of one claim into a pop answer: `tail` is what every
/// message repeats (lease and group), `written` counts the messages so far.
fn write_claim(out: &mut String, c: &Claim, tail: &str, written: &mut usize) {
    use crate::wire::json::{write_int, write_opt_id, write_opt_str, write_str};
    // Per claim: what its messages share after createdAt.
    let mut shared = String::from(",\"queue\":");
    write_str(&mut shared, &c.queue);
    shared.push_str(",\"partition\":");
    write_str(&mut shared, &c.partition);
    shared.push_str(",\"partitionId\":\"");
    write_int(&mut shared, c.partition_id);
    shared.push_str("\",\"offset\":");
    let mut after_offset = tail.to_owned();
    after_offset.push_str(",\"deliveryAttempt\":");
    write_int(&mut after_offset, c.delivery_attempt as i64);
    after_offset.push_str(",\"retryCount\":");
    write_int(&mut after_offset, c.delivery_attempt as i64 - 1);
    after_offset.push('}');
    for seg in &c.segments {
        let created_at = micros_to_iso(seg.created_at_us);
        for (i, f) in seg.frames().enumerate() {
            let offset = seg.base_offset + i as i64;
            if offset < c.start || offset > c.end {
                continue;
            }
            if f.is_encrypted() {
                errors::corrupt(format!(
                    "message at offset {offset} of partition {} is encrypted and can not be decoded here",
                    c.partition_id
                ));
            }
            // Every write path checked the payload to be one JSON
            // document; it is copied as it is.
            let data = std::str::from_utf8(f.payload).unwrap_or_else(|_| {
                errors::corrupt(format!(
                    "message at offset {offset} of partition {}: payload is not UTF-8",
                    c.partition_id
                ))
            });
            if *written > 0 {
                out.push(',');
            }
            *written += 1;
            out.push_str("{\"id\":");
            write_opt_id(out, Some(&f.message_id));
            out.push_str(",\"transactionId\":");
            write_str(out, f.transaction_id);
            out.push_str(",\"traceId\":");
            write_opt_id(out, f.trace_id.as_ref());
            out.push_str(",\"data\":");
            out.push_str(data);
            out.push_str(",\"producerSub\":");
            write_opt_str(out, f.producer);
            out.push_str(",\"createdAt\":\"");
            out.push_str(&created_at);
            out.push('"');
            out.push_str(&shared);
            write_int(out, offset);
            out.push_str(&after_offset);
        }
    }
}
