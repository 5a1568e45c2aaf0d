//! The message readers: any message by its address (live, dead-lettered,
//! or only kept by its dead letters), and the listing of a window of
//! messages newest first, each with its status across the consumer groups.
//! Answers are shaped as Queen's server shapes them.

use std::collections::HashMap;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;
use queen_frames::FrameRef;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::catalog::queues;
use crate::engine::deleted;
use crate::engine::dlq::raw_payload;
use crate::engine::erase::locate;
use crate::engine::push::txn_hash;
use crate::engine::segments;
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::pg::time::{micros_to_iso, PG_EPOCH_OFFSET_US};
use crate::query;
use crate::wire::segment::Segment;
use crate::wire::splice::{self, Splice};
use crate::wire::QUEUE_MODE;

/// A partition and its queue.
struct Partition {
    id: i64,
    name: String,
    log_start: i64,
    queue_id: i64,
    queue: String,
    namespace: Option<String>,
    task: Option<String>,
    priority: i32,
}

impl Partition {
    fn of_row(r: &pgrx::spi::SpiHeapTupleData<'_>) -> Partition {
        Partition {
            id: spi::col(r, "id"),
            name: spi::col(r, "partition"),
            log_start: spi::col(r, "log_start"),
            queue_id: spi::col(r, "queue_id"),
            queue: spi::col(r, "queue"),
            namespace: spi::opt(r, "namespace"),
            task: spi::opt(r, "task"),
            priority: spi::col(r, "priority"),
        }
    }
}

fn partition(client: &mut SpiClient<'_>, pid: i64) -> Option<Partition> {
    exec(
        client,
        query!("messages_partition"),
        &[spi::INT8],
        &[pid.into()],
    )
    .next()
    .map(|r| Partition::of_row(&r))
}

/// A consumer group of a partition and its cursor there (None: it never
/// read the partition).
struct Group {
    name: String,
    committed: Option<i64>,
    lease: Option<(i64, i64)>,
    lease_expires_us: Option<i64>,
}

fn groups(client: &mut SpiClient<'_>, p: &Partition) -> Vec<Group> {
    exec(
        client,
        query!("messages_groups"),
        &[spi::INT8, spi::INT8],
        &[p.id.into(), p.queue_id.into()],
    )
    .map(|r| {
        let leased = spi::opt::<bool>(&r, "leased").unwrap_or(false);
        let lease = match (
            spi::opt::<i64>(&r, "lease_start"),
            spi::opt::<i64>(&r, "lease_end"),
        ) {
            (Some(s), Some(e)) if leased => Some((s, e)),
            _ => None,
        };
        Group {
            name: spi::col(&r, "consumer_group"),
            committed: spi::opt(&r, "committed"),
            lease,
            lease_expires_us: spi::opt(&r, "lease_expires_us"),
        }
    })
    .collect()
}

/// A dead letter of an offset: its group, error and deliveries.
struct Dead {
    group: String,
    error: Option<String>,
    attempts: i32,
}

/// The dead letters of `offsets` of `pid`, newest failure first per offset.
fn dead_letters(client: &mut SpiClient<'_>, pid: i64, offsets: &[i64]) -> HashMap<i64, Vec<Dead>> {
    let mut out: HashMap<i64, Vec<Dead>> = HashMap::new();
    if offsets.is_empty() {
        return out;
    }
    for r in exec(
        client,
        query!("messages_dead_letters_at_offsets"),
        &[spi::INT8, spi::INT8_ARRAY],
        &[pid.into(), offsets.to_vec().into()],
    ) {
        out.entry(spi::col(&r, "message_offset"))
            .or_default()
            .push(Dead {
                group: spi::col(&r, "consumer_group"),
                error: spi::opt(&r, "error"),
                attempts: spi::col(&r, "attempts"),
            });
    }
    out
}

/// A message's status for one group: done, leased right now, or waiting.
fn group_status(g: &Group, offset: i64) -> &'static str {
    if g.committed.is_some_and(|c| c >= offset) {
        "completed"
    } else if g.lease.is_some_and(|(s, e)| s <= offset && offset <= e) {
        "processing"
    } else {
        "pending"
    }
}

/// A message's status over every group, as Queen derives it: dead_letter
/// when it has a dead letter; completed when every named group passed it
/// (queue mode when there is none); processing under a live lease; else
/// pending.
struct Status {
    status: &'static str,
    queue_status: Option<&'static str>,
    consumed_by: usize,
    total_groups: usize,
    lease_expires_us: Option<i64>,
}

fn status(groups: &[Group], dead: bool, offset: i64) -> Status {
    let named: Vec<&Group> = groups.iter().filter(|g| g.name != QUEUE_MODE).collect();
    let queue_mode = groups.iter().find(|g| g.name == QUEUE_MODE);
    let consumed_by = named
        .iter()
        .filter(|g| group_status(g, offset) == "completed")
        .count();
    let completed = if named.is_empty() {
        queue_mode.is_some_and(|g| group_status(g, offset) == "completed")
    } else {
        consumed_by == named.len()
    };
    let leased = groups
        .iter()
        .find(|g| group_status(g, offset) == "processing");
    Status {
        status: if dead {
            "dead_letter"
        } else if completed {
            "completed"
        } else if leased.is_some() {
            "processing"
        } else {
            "pending"
        },
        queue_status: queue_mode.map(|g| group_status(g, offset)),
        consumed_by,
        total_groups: named.len(),
        lease_expires_us: leased.and_then(|g| g.lease_expires_us),
    }
}

/// The mode of a set of groups: `{"hasQueueMode", "busGroupsCount",
/// "type"}`, type bus, queue, hybrid or none.
fn mode<'a>(names: impl Iterator<Item = &'a str>) -> Value {
    let mut has_queue_mode = false;
    let mut bus: Vec<&str> = Vec::new();
    for n in names {
        if n == QUEUE_MODE {
            has_queue_mode = true;
        } else if !bus.contains(&n) {
            bus.push(n);
        }
    }
    let kind = match (has_queue_mode, bus.is_empty()) {
        (true, false) => "hybrid",
        (false, false) => "bus",
        (true, true) => "queue",
        (false, true) => "none",
    };
    json!({"hasQueueMode": has_queue_mode, "busGroupsCount": bus.len(), "type": kind})
}

/// What a message answer takes from its frame.
struct FrameCopy {
    id: Option<String>,
    transaction_id: String,
    trace_id: Option<String>,
    producer: Option<String>,
    data: Box<RawValue>,
    encrypted: bool,
    created_us: Option<i64>,
}

fn copy_frame(seg: &Segment, offset: i64) -> Option<FrameCopy> {
    let f = seg.frames().nth((offset - seg.base_offset) as usize)?;
    let encrypted = f.is_encrypted();
    Some(FrameCopy {
        id: Some(queen_frames::id_text(&f.message_id)),
        transaction_id: f.transaction_id.to_owned(),
        trace_id: f.trace_id.map(|t| queen_frames::id_text(&t)),
        producer: f.producer.map(str::to_owned),
        data: if encrypted {
            splice::null()
        } else {
            raw_payload(f.payload)
        },
        encrypted,
        created_us: Some(seg.created_at_us),
    })
}

/// One message by its address: the newest live copy of the transaction id
/// in the partition, or, once its segment is gone, what its dead letters
/// kept. Raises 42704 when there is neither (or it was deleted).
pub fn get(client: &mut SpiClient<'_>, pid: i64, txn: &str) -> Box<RawValue> {
    let missing = || errors::undefined("message", &format!("{pid}/{txn}"));
    let Some(p) = partition(client, pid) else {
        missing()
    };
    let Some((offset, frame)) = newest_copy(client, pid, txn) else {
        missing()
    };
    let groups = groups(client, &p);
    let dead = dead_letters(client, pid, &[offset])
        .remove(&offset)
        .unwrap_or_default();
    let st = status(&groups, !dead.is_empty(), offset);
    let newest_dead = dead.first();
    let queue_config = queues::find(client, &p.queue).map(|q| q.options.to_json());
    let consumer_groups = group_views(&groups, &dead, offset);
    let mut payloads = Splice::new();
    let data = payloads.hold(frame.data);
    payloads.answer(&json!({
        "id": frame.id,
        "transactionId": frame.transaction_id,
        "data": data,
        "payload": data,
        "traceId": frame.trace_id,
        "producerSub": frame.producer,
        "createdAt": frame.created_us.map(micros_to_iso),
        "partitionId": pid.to_string(),
        "partition": p.name,
        "offset": offset,
        "isEncrypted": frame.encrypted,
        "queue": p.queue,
        "queuePath": format!("{}/{}", p.queue, p.name),
        "namespace": p.namespace,
        "task": p.task,
        "status": st.status,
        "errorMessage": newest_dead.and_then(|d| d.error.clone()),
        "retryCount": newest_dead.map_or(0, |d| d.attempts),
        "leaseExpiresAt": st.lease_expires_us.map(micros_to_iso),
        "queueConfig": queue_config,
        "mode": {
            "hasQueueMode": groups.iter().any(|g| g.name == QUEUE_MODE && g.committed.is_some()),
            "busGroupsCount": st.total_groups,
            "type": if st.total_groups > 0 { "bus" } else { "queue" },
        },
        "consumerGroups": consumer_groups,
    }))
}

/// The offset and frame of the newest live copy of `txn` in `pid` that was
/// not deleted, else of what its dead letters kept (None: neither).
fn newest_copy(client: &mut SpiClient<'_>, pid: i64, txn: &str) -> Option<(i64, FrameCopy)> {
    let mut live = locate(client, pid, txn);
    if let (Some(first), Some(last)) = (live.first(), live.last()) {
        let gone = deleted::in_range(client, pid, first.0, last.0);
        live.retain(|(o, _)| gone.binary_search(o).is_err());
    }
    match live.pop() {
        Some((offset, seg)) => copy_frame(&seg, offset).map(|frame| (offset, frame)),
        // Only dead letters may still name it.
        None => dead_copy(client, pid, txn),
    }
}

/// The offset and frame of `txn` in `pid` as its newest dead letter kept
/// it: a narrow row's frame is read from its segment, still there.
fn dead_copy(client: &mut SpiClient<'_>, pid: i64, txn: &str) -> Option<(i64, FrameCopy)> {
    let (offset, wide) = exec(
        client,
        query!("messages_dead_by_txn"),
        &[spi::INT8, spi::TEXT],
        &[pid.into(), txn.into()],
    )
    .next()
    .map(|r| {
        let payload: Option<Vec<u8>> = spi::opt(&r, "payload");
        let offset: i64 = spi::col(&r, "message_offset");
        let wide = FrameCopy {
            id: spi::opt(&r, "message_id"),
            transaction_id: txn.to_owned(),
            trace_id: spi::opt(&r, "trace_id"),
            producer: None,
            data: payload.as_deref().map_or_else(splice::null, raw_payload),
            encrypted: false,
            created_us: spi::opt(&r, "created_us"),
        };
        (offset, wide)
    })?;
    let frame = segments::covering(client, pid, offset)
        .and_then(|seg| copy_frame(&seg, offset))
        .filter(|f| f.transaction_id == txn)
        .unwrap_or(wide);
    Some((offset, frame))
}

/// Each group's view of the message at `offset`: its status there, its
/// cursor, the lease holding it and its dead letter's error.
fn group_views(groups: &[Group], dead: &[Dead], offset: i64) -> Vec<Value> {
    groups
        .iter()
        .map(|g| {
            let d = dead.iter().find(|d| d.group == g.name);
            json!({
                "consumerGroup": g.name,
                "status": if d.is_some() { "dead_letter" } else { group_status(g, offset) },
                "committedOffset": g.committed,
                "leaseExpiresAt": g.lease
                    .filter(|(s, e)| *s <= offset && offset <= *e)
                    .and(g.lease_expires_us)
                    .map(micros_to_iso),
                "errorMessage": d.and_then(|d| d.error.clone()),
            })
        })
        .collect()
}

/// The statuses a listing filters on.
pub const STATUSES: [&str; 4] = ["pending", "processing", "completed", "dead_letter"];

/// What a listing reads: the partitions' filters, the window, the status
/// and the page.
pub struct ListFilter<'a> {
    pub queue: Option<&'a str>,
    pub partition: Option<&'a str>,
    pub namespace: Option<&'a str>,
    pub task: Option<&'a str>,
    pub status: Option<&'a str>,
    /// The window, in microseconds since the Unix epoch, both ends inclusive.
    pub from_us: i64,
    pub to_us: i64,
    pub limit: i64,
    pub offset: i64,
    /// Where an earlier page that stopped at its byte or segment bound
    /// left off.
    pub cursor: Option<ListCursor>,
}

/// Where a listing left off: after the segment (created at `created_us`,
/// of partition `pid`, at `base`), with `skip` matching messages of the
/// asked offset still to pass. Written as `created_us.pid.base.skip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCursor {
    pub created_us: i64,
    pub pid: i64,
    pub base: i64,
    pub skip: i64,
}

impl ListCursor {
    /// The cursor as text.
    pub fn text(&self) -> String {
        format!(
            "{}.{}.{}.{}",
            self.created_us, self.pid, self.base, self.skip
        )
    }

    /// Reads a cursor an earlier page answered; 22023 naming `field`
    /// otherwise.
    pub fn parse(field: &str, text: &str) -> ListCursor {
        let parts: Vec<Option<i64>> = text.split('.').map(|p| p.parse().ok()).collect();
        match parts[..] {
            [Some(created_us), Some(pid), Some(base), Some(skip)] if skip >= 0 => ListCursor {
                created_us,
                pid,
                base,
                skip,
            },
            _ => errors::invalid(
                field,
                format!("{text:?} is not a cursor a listing answered"),
            ),
        }
    }
}

/// Where one segment a listing may read is, and how many bytes it stores.
struct Head {
    pid: i64,
    base: i64,
    created_us: i64,
    bytes: i64,
}

fn ts(us: i64) -> TimestampWithTimeZone {
    TimestampWithTimeZone::try_from(us - PG_EPOCH_OFFSET_US)
        .unwrap_or_else(|_| errors::invalid("from", format!("{us} is out of range")))
}

/// One page of the messages written within the window, newest first, with
/// each one's status: `{"messages", "mode", "total"}` (total: the page's
/// length, as Queen answers it). Deleted messages are left out.
pub fn list(client: &mut SpiClient<'_>, f: &ListFilter<'_>) -> Box<RawValue> {
    let scan_max = settings::messages_scan_max();
    let parts = list_partitions(client, f, scan_max);
    // Every segment holds at least one message: without a status filter the
    // page needs no more segments than messages.
    let to_skip = f.cursor.map_or(f.offset, |c| c.skip);
    let segment_limit = if f.status.is_some() {
        scan_max
    } else {
        (to_skip + f.limit).min(scan_max)
    };
    let ids: Vec<i64> = parts.iter().map(|p| p.id).collect();
    let mut heads = if ids.is_empty() {
        Vec::new()
    } else {
        segment_heads(client, f, ids, segment_limit)
    };
    let bounded = keep_within_bytes(&mut heads, segment_limit);
    let read = Read::of(client, &parts, &heads);
    let mut page = Page {
        f,
        to_skip,
        skipped: 0,
        out: Vec::new(),
        payloads: Splice::new(),
    };
    page.fill(&read);
    page.answer(heads.last(), bounded, read.modes())
}

/// The partitions a listing may read (at most `scan_max`), with their queues.
fn list_partitions(
    client: &mut SpiClient<'_>,
    f: &ListFilter<'_>,
    scan_max: i64,
) -> Vec<Partition> {
    exec(
        client,
        query!("messages_list_partitions"),
        &[
            spi::UUID,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::INT8,
        ],
        &[
            queues::default_tenant().into(),
            f.queue.into(),
            f.partition.into(),
            f.namespace.into(),
            f.task.into(),
            scan_max.into(),
        ],
    )
    .map(|r| Partition::of_row(&r))
    .collect()
}

/// The segments of partitions `ids` created within the window, newest
/// first, after the cursor's segment when there is one; at most `limit`.
fn segment_heads(
    client: &mut SpiClient<'_>,
    f: &ListFilter<'_>,
    ids: Vec<i64>,
    limit: i64,
) -> Vec<Head> {
    let after = f
        .cursor
        .map(|c| crate::pg::time::us_to_timestamptz("cursor", c.created_us));
    exec(
        client,
        query!("messages_list_segments"),
        &[
            spi::INT8_ARRAY,
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::INT8,
            spi::TIMESTAMPTZ,
            spi::INT8,
            spi::INT8,
        ],
        &[
            ids.into(),
            ts(f.from_us).into(),
            ts(f.to_us).into(),
            limit.into(),
            after.into(),
            f.cursor.map(|c| c.pid).into(),
            f.cursor.map(|c| c.base).into(),
        ],
    )
    .map(|r| Head {
        pid: spi::col(&r, "partition_id"),
        base: spi::col(&r, "base_offset"),
        created_us: spi::col(&r, "created_us"),
        bytes: spi::opt(&r, "bytes").unwrap_or(0),
    })
    .collect()
}

/// Cuts `heads` at the byte bound (the first is always read); whether more
/// segments may follow them, because the bound or the segment limit
/// stopped the read.
fn keep_within_bytes(heads: &mut Vec<Head>, segment_limit: i64) -> bool {
    let budget = settings::messages_scan_max_bytes();
    let mut used = 0i64;
    let mut kept = 0usize;
    for h in heads.iter() {
        if kept > 0 && used + h.bytes > budget {
            break;
        }
        used += h.bytes;
        kept += 1;
    }
    let bounded = kept < heads.len() || heads.len() as i64 >= segment_limit;
    heads.truncate(kept);
    bounded
}

/// What a listing knows of a partition it read: its groups, and its
/// tombstones and dead letters over the offsets read.
struct Seen {
    groups: Vec<Group>,
    gone: Vec<i64>,
    dead: HashMap<i64, Vec<Dead>>,
}

/// What a listing read: the partitions by id, the segments in the order
/// read, and what it knows of each partition read.
struct Read<'a> {
    by_id: HashMap<i64, &'a Partition>,
    segs: Vec<(i64, Segment)>,
    seen: HashMap<i64, Seen>,
}

impl<'a> Read<'a> {
    /// Loads the segments of `heads` and what the listing needs of their
    /// partitions.
    fn of(client: &mut SpiClient<'_>, parts: &'a [Partition], heads: &[Head]) -> Read<'a> {
        let by_id: HashMap<i64, &Partition> = parts.iter().map(|p| (p.id, p)).collect();
        let segs = load(client, heads);
        // Per partition read: its groups, tombstones and dead letters over
        // the offsets read.
        let mut spans: HashMap<i64, (i64, i64)> = HashMap::new();
        for (pid, s) in &segs {
            let e = spans.entry(*pid).or_insert((s.base_offset, s.end_offset));
            e.0 = e.0.min(s.base_offset);
            e.1 = e.1.max(s.end_offset);
        }
        let mut seen: HashMap<i64, Seen> = HashMap::new();
        for (pid, (lo, hi)) in &spans {
            let p = by_id[pid];
            let offsets: Vec<i64> = (*lo..=*hi).collect();
            seen.insert(
                *pid,
                Seen {
                    groups: groups(client, p),
                    gone: deleted::in_range(client, *pid, *lo, *hi),
                    dead: dead_letters(client, *pid, &offsets),
                },
            );
        }
        Read { by_id, segs, seen }
    }

    /// The mode of every group of the partitions read.
    fn modes(&self) -> Value {
        mode(
            self.seen
                .values()
                .flat_map(|s| s.groups.iter().map(|g| g.name.as_str())),
        )
    }
}

/// The segments of `heads`, in their order; a segment retention deleted
/// meanwhile is left out.
fn load(client: &mut SpiClient<'_>, heads: &[Head]) -> Vec<(i64, Segment)> {
    let mut loaded: HashMap<(i64, i64), Segment> = HashMap::new();
    if !heads.is_empty() {
        let pids: Vec<i64> = heads.iter().map(|h| h.pid).collect();
        let bases: Vec<i64> = heads.iter().map(|h| h.base).collect();
        for r in exec(
            client,
            query!("messages_list_load"),
            &[spi::INT8_ARRAY, spi::INT8_ARRAY],
            &[pids.into(), bases.into()],
        ) {
            let pid: i64 = spi::col(&r, "partition_id");
            if let Some(seg) = Segment::from_columns(&r) {
                loaded.insert((pid, seg.base_offset), seg);
            }
        }
    }
    heads
        .iter()
        .filter_map(|h| loaded.remove(&(h.pid, h.base)).map(|s| (h.pid, s)))
        .collect()
}

/// A page being filled: the matching messages to pass first and how many
/// were, the messages kept and their payloads.
struct Page<'f> {
    f: &'f ListFilter<'f>,
    to_skip: i64,
    skipped: i64,
    out: Vec<Value>,
    payloads: Splice,
}

impl Page<'_> {
    /// Walks the segments in the order read, each one's messages newest
    /// first, until the page is full.
    fn fill(&mut self, read: &Read<'_>) {
        for (pid, seg) in &read.segs {
            let p = read.by_id[pid];
            let s = &read.seen[pid];
            let frames: Vec<_> = seg.frames().collect();
            for (i, fr) in frames.iter().enumerate().rev() {
                let offset = seg.base_offset + i as i64;
                if offset < p.log_start || s.gone.binary_search(&offset).is_ok() {
                    continue;
                }
                let st = status(&s.groups, s.dead.contains_key(&offset), offset);
                if self.f.status.is_some_and(|want| want != st.status) {
                    continue;
                }
                if self.skipped < self.to_skip {
                    self.skipped += 1;
                    continue;
                }
                let message = self.message(p, seg, i, fr, &st);
                self.out.push(message);
                if self.out.len() as i64 >= self.f.limit {
                    return;
                }
            }
        }
    }

    /// Message `i` of `seg` as a listing answers it, its payload held.
    fn message(
        &mut self,
        p: &Partition,
        seg: &Segment,
        i: usize,
        fr: &FrameRef<'_>,
        st: &Status,
    ) -> Value {
        let encrypted = fr.is_encrypted();
        let data = self.payloads.hold(if encrypted {
            splice::null()
        } else {
            raw_payload(fr.payload)
        });
        json!({
            "id": queen_frames::id_text(&fr.message_id),
            "transactionId": fr.transaction_id,
            "txnHash": format!("{:016x}", txn_hash(fr.transaction_id) as u64),
            "partitionId": p.id.to_string(),
            "queuePath": format!("{}/{}", p.queue, p.name),
            "queue": p.queue,
            "partition": p.name,
            "namespace": p.namespace,
            "task": p.task,
            "offset": seg.base_offset + i as i64,
            "status": st.status,
            "queueStatus": st.queue_status,
            "busStatus": {"consumedBy": st.consumed_by, "totalGroups": st.total_groups},
            "traceId": fr.trace_id.map(|t| queen_frames::id_text(&t)),
            "producerSub": fr.producer,
            "queuePriority": p.priority,
            "payloadAvailable": !encrypted,
            "segment": {"seq": seg.base_offset, "frameIdx": i},
            "createdAt": micros_to_iso(seg.created_at_us),
            "leaseExpiresAt": st.lease_expires_us.map(micros_to_iso),
            "data": data,
            "payload": data,
            "isEncrypted": encrypted,
        })
    }

    /// The page's answer. A full page may have more after it (the next
    /// offset reads them); a page cut short by the bounds has more after
    /// its last segment, `last`, where the cursor reads on.
    fn answer(self, last: Option<&Head>, bounded: bool, modes: Value) -> Box<RawValue> {
        let total = self.out.len();
        let full = total as i64 >= self.f.limit;
        let cursor = match last {
            Some(last) if bounded && !full => Some(
                ListCursor {
                    created_us: last.created_us,
                    pid: last.pid,
                    base: last.base,
                    skip: self.to_skip - self.skipped,
                }
                .text(),
            ),
            _ => None,
        };
        self.payloads.answer(&json!({
            "messages": self.out,
            "mode": modes,
            "total": total,
            "hasMore": full || cursor.is_some(),
            "cursor": cursor,
        }))
    }
}
