//! The read path: claim partitions for a consumer group, lease a batch from
//! each, and decode its messages from the segments.
//!
//! A partition leased to one consumer of a group is skipped by the others:
//! its cursor's newest state is taken with SKIP LOCKED (a pop never waits on a
//! lock) and its lease must be free or expired. Everything a pop hands out is
//! one lease id, whatever the number of partitions it claimed. The
//! partitions worth trying are found by a window over each queue's
//! partitions, from where this connection's last pop of the queue stopped
//! (`positions`); a queue whose window finds none is read whole, and what
//! that read found is offered, in turn, to the next pops of the queue
//! (`positions::hints`, `next_hints`). A typed
//! request in, typed claims out: the request's options and the answers
//! (JSON, framed) are `wire::pop`.

use pgrx::spi::SpiClient;

use crate::catalog::cursors;
use crate::catalog::queues;
use crate::catalog::switches::{self, Surface};
use crate::engine::counters::{self, Count};
use crate::engine::deleted;
use crate::engine::memo;
use crate::engine::segments::{self, Scan};
use crate::engine::soft_commit::{self, Soft};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::pop::{Claim, Conflated, PopOut, PopRequest, Subscription};
use crate::wire::segment::Segment;
use crate::wire::QUEUE_MODE;

struct Candidate {
    pid: i64,
    name: String,
    queue_idx: usize,
    log_start: i64,
    fresh: bool,
    /// The candidate's place in its queue's scan: -1 a hinted partition, 0
    /// past the scan's position, 1 after it wrapped round to the first
    /// name, [`WHOLE`] found by the read of the whole queue.
    lap: i32,
}

impl Candidate {
    /// The claim of `range` of this partition of `queue`, its `attempts`-th
    /// delivery: `segs` hold it, the deleted offsets `skip` are leased done.
    fn claim(
        self,
        queue: &PopQueue,
        range: std::ops::RangeInclusive<i64>,
        attempts: i32,
        segs: Vec<Segment>,
        skip: Vec<i64>,
    ) -> Claim {
        Claim {
            partition_id: self.pid,
            partition: self.name,
            queue: queue.name.clone(),
            start: *range.start(),
            end: *range.end(),
            delivery_attempt: attempts,
            segments: segs,
            skip,
        }
    }
}

/// The lap of a candidate found by the read of the whole queue.
const WHOLE: i32 = 2;

/// Where this backend's candidate scans stand: for a (queue name, consumer
/// group), the name of the last candidate its latest scan found. The next
/// scan starts past it (pop_candidates.sql), so a pop on a queue of many
/// partitions reads a window of them, and the windows go round the queue.
/// A position is only a hint: a lost or stale one (a queue deleted and made
/// again) moves where the next scan starts, nothing else.
mod positions {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use super::Candidate;
    use crate::pg::kept::keep;

    thread_local! {
        static AT: RefCell<HashMap<(String, String), String>> = RefCell::new(HashMap::new());
        /// For a (queue name, consumer group), partitions a read of the whole
        /// queue found to be candidates, in the order the next pops of the
        /// queue offer them (`next_hints`).
        static HINTS: RefCell<HashMap<(String, String), Vec<i64>>> = RefCell::new(HashMap::new());
    }

    /// The hinted partitions of `queue` for `group` (none: empty).
    pub(super) fn hints(queue: &str, group: &str) -> Vec<i64> {
        HINTS.with_borrow(|h| {
            h.get(&(queue.to_owned(), group.to_owned()))
                .cloned()
                .unwrap_or_default()
        })
    }

    /// Sets the hinted partitions of `queue` for `group` (none: forgets).
    pub(super) fn hint(queue: &str, group: &str, pids: Vec<i64>) {
        HINTS.with_borrow_mut(|h| {
            if pids.is_empty() {
                h.remove(&(queue.to_owned(), group.to_owned()));
            } else {
                keep(h, queue, group, pids);
            }
        })
    }

    /// The scan position of `queue` for `group`.
    pub(super) fn of(queue: &str, group: &str) -> Option<String> {
        AT.with_borrow(|at| at.get(&(queue.to_owned(), group.to_owned())).cloned())
    }

    /// Moves `queue`'s position to the last of `cands` in scan order (those
    /// whose queue_idx is `idx`); with none, the position stays.
    pub(super) fn advance(queue: &str, idx: usize, group: &str, cands: &[Candidate]) {
        let Some(last) = cands
            .iter()
            .filter(|c| c.queue_idx == idx)
            .max_by(|a, b| (a.lap, &a.name).cmp(&(b.lap, &b.name)))
        else {
            return;
        };
        AT.with_borrow_mut(|at| keep(at, queue, group, last.name.clone()))
    }
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
    hints: &[i64],
) -> (Vec<PopQueue>, i64, Vec<Candidate>) {
    const SQL: &str = query!("pop_named_candidates");
    let limit = req.partitions * settings::pop_candidates();
    let after = positions::of(name, &req.group);
    let window = settings::pop_scan_window(limit);
    let skip = match req.partition {
        None => memo::skips(
            name,
            &req.group,
            after.as_deref().unwrap_or(""),
            window as usize,
        ),
        Some(_) => Vec::new(),
    };
    let rows = spi::exec_in_order(
        client,
        SQL,
        &[
            spi::UUID,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::INT8,
            spi::TEXT,
            spi::INT8,
            spi::INT8_ARRAY,
            spi::INT8_ARRAY,
        ],
        &[
            queues::default_tenant().into(),
            name.into(),
            req.group.as_str().into(),
            req.partition.as_deref().into(),
            limit.into(),
            after.clone().into(),
            window.into(),
            hints.to_vec().into(),
            skip.into(),
        ],
    );
    let (queue, now_us, cands) = read_named(rows);
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

/// The queue of `rows` (None when there is no row), the now() they carry,
/// and its candidates: the rows of a named pop's statement.
fn read_named(rows: pgrx::spi::SpiTupleTable<'_>) -> (Option<PopQueue>, i64, Vec<Candidate>) {
    let mut queue: Option<PopQueue> = None;
    let mut now_us = 0;
    let mut cands = Vec::new();
    for r in rows {
        if queue.is_none() {
            queue = Some(PopQueue::from_row(&r));
            now_us = spi::col(&r, "now_us");
        }
        if spi::opt::<i64>(&r, "id").is_some() {
            keep_first(&mut cands, &r, 0);
        }
    }
    (queue, now_us, cands)
}

/// The partitions worth trying across `qs`, found by each queue's candidate
/// window, and the transaction's now() (µs), read in the same statement.
fn candidates(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    qs: &[PopQueue],
    hinted: &[Hinted],
) -> (i64, Vec<Candidate>) {
    const SQL: &str = query!("pop_candidates");
    let ids: Vec<i64> = qs.iter().map(|q| q.id).collect();
    let windows: Vec<i32> = qs.iter().map(|q| q.window_buffer).collect();
    let after: Vec<String> = qs
        .iter()
        .map(|q| positions::of(&q.name, &req.group).unwrap_or_default())
        .collect();
    let (mut h_from, mut h_to, mut pids) = (Vec::new(), Vec::new(), Vec::new());
    for h in hinted {
        h_from.push(pids.len() as i32 + 1);
        pids.extend_from_slice(h.offered());
        h_to.push(pids.len() as i32);
    }
    let limit = req.partitions * settings::pop_candidates();
    let window = settings::pop_scan_window(limit);
    let skip: Vec<i64> = match req.partition {
        None => qs
            .iter()
            .zip(&after)
            .flat_map(|(q, a)| memo::skips(&q.name, &req.group, a, window as usize))
            .collect(),
        Some(_) => Vec::new(),
    };
    let rows = spi::exec_in_order(
        client,
        SQL,
        &[
            spi::INT8_ARRAY,
            spi::INT4_ARRAY,
            spi::TEXT,
            spi::TEXT,
            spi::INT8,
            spi::TEXT_ARRAY,
            spi::INT8,
            spi::INT4_ARRAY,
            spi::INT8_ARRAY,
            spi::INT4_ARRAY,
            spi::INT8_ARRAY,
        ],
        &[
            ids.into(),
            windows.into(),
            req.group.as_str().into(),
            req.partition.as_deref().into(),
            limit.into(),
            after.into(),
            window.into(),
            h_from.into(),
            skip.into(),
            h_to.into(),
            pids.into(),
        ],
    );
    read_candidates(rows, qs)
}

/// The partitions worth trying across the queues `dry` of `qs`, found among
/// all their partitions, and the transaction's now() (µs): for the queues
/// whose candidate windows found none, as when a queue's partitions are
/// many and few hold messages for the group.
fn candidates_everywhere(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    qs: &[PopQueue],
    dry: &[usize],
) -> (i64, Vec<Candidate>) {
    const SQL: &str = query!("pop_candidates_everywhere");
    let ids: Vec<i64> = dry.iter().map(|&idx| qs[idx].id).collect();
    let windows: Vec<i32> = dry.iter().map(|&idx| qs[idx].window_buffer).collect();
    let skip: Vec<i64> = dry
        .iter()
        .flat_map(|&idx| memo::skips_all(&qs[idx].name, &req.group))
        .collect();
    let rows = spi::exec_probing(
        client,
        SQL,
        &[
            spi::INT8_ARRAY,
            spi::INT4_ARRAY,
            spi::TEXT,
            spi::INT8,
            spi::INT8_ARRAY,
        ],
        &[
            ids.into(),
            windows.into(),
            req.group.as_str().into(),
            (req.partitions * settings::pop_candidates()).into(),
            skip.into(),
        ],
    );
    read_candidates(rows, qs)
}

/// The candidates of `rows` (columns id, name, queue_id, log_start, fresh,
/// lap and now_us), each of a queue of `qs`, and the now() they carry.
fn read_candidates(rows: pgrx::spi::SpiTupleTable<'_>, qs: &[PopQueue]) -> (i64, Vec<Candidate>) {
    let mut now_us = 0;
    let mut cands = Vec::new();
    for r in rows {
        let qid: i64 = spi::col(&r, "queue_id");
        now_us = spi::col(&r, "now_us");
        let queue_idx = qs
            .iter()
            .position(|q| q.id == qid)
            .expect("candidate of a target queue");
        keep_first(&mut cands, &r, queue_idx);
    }
    (now_us, cands)
}

/// Adds the candidate of row `r` (columns id, name, log_start, fresh and
/// lap), of the queue `queue_idx`, unless `cands` has it already: a hinted
/// partition may come again in its window's laps, and its first row counts.
fn keep_first(cands: &mut Vec<Candidate>, r: &pgrx::spi::SpiHeapTupleData<'_>, queue_idx: usize) {
    let pid: i64 = spi::col(r, "id");
    if cands.iter().any(|c| c.pid == pid) {
        return;
    }
    cands.push(Candidate {
        pid,
        name: spi::col(r, "name"),
        queue_idx,
        log_start: spi::col(r, "log_start"),
        fresh: spi::col(r, "fresh"),
        lap: spi::col(r, "lap"),
    });
}

/// Takes a transaction-scoped advisory lock on (`what`, `id`, `group`)
/// without waiting. It stands in front of the inserts that create a cursor or
/// a group row: an insert that conflicts with another transaction's
/// uncommitted insert would wait for it, and a pop never waits.
fn try_creation_lock(client: &mut SpiClient<'_>, what: u32, id: i64, group: &str) -> bool {
    // The two-int4 key space is separate from the bigint keys of the
    // maintenance locks; a collision only makes a pop skip a candidate.
    let k1 = (xxhash_rust::xxh3::xxh3_64(group.as_bytes()) as u32 ^ what) as i32;
    let k2 = spi::advisory_id(id);
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
    // A pop that asks for conflation registers the group as conflating.
    let subscribe = match req.conflation {
        false => query!("pop_subscribe"),
        true => query!("pop_subscribe_conflating"),
    };
    exec(
        client,
        subscribe,
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
    /// The state the take locked, which the pop's next state replaces.
    held: cursors::Held,
    /// The first offset to hand out: the one after the last done, or the
    /// partition's log start when the cursor is below it (those offsets are
    /// gone).
    from: i64,
    head_offset: Option<i64>,
    head_attempts: i32,
}

impl Cursor {
    /// The delivery count of a batch from `start`. When the head (the first
    /// message of the last delivery, with its count) lies at `start` or
    /// among the deleted messages the cursor steps over at the front of the
    /// batch, the batch is that delivery again, as a batch redelivered from
    /// its head is, and keeps its count; else it is a first delivery.
    fn attempts_from(&self, start: i64) -> i32 {
        let head_here = self
            .head_offset
            .is_some_and(|h| self.from <= h && h <= start);
        if head_here {
            self.head_attempts + 1
        } else {
            1
        }
    }
}

/// Segments one scan reads at most (only those the batch needs are read);
/// not measured, a round number that covers a batch of 100 single-message
/// pushes in two round trips.
const SCAN_CHUNK: i64 = 64;

/// Takes the consumer row of (pid, group) without waiting, and only when its
/// lease is free, and reads the first segments of a batch of `want` from its
/// `from`, in one statement; None when another consumer holds the row. With
/// `tombstones` (the schema has `queen.log_deleted`) the same statement also
/// reads the deleted offsets of the batch's range, in order: one probe of
/// the tombstones' primary key, empty when nothing there was deleted.
/// Measured 2026-12-01 with pgbench (one auto-acked pop of one message per
/// transaction, one connection, three rounds on a shared two-core machine):
/// 503, 564 and 479 pops/s with the table against 599, 565 and 509 with it
/// renamed away (the 0.2.0 statement); within the machine's noise in one
/// round, up to 16% in another.
///
/// A state granted to this statement after another transaction replaced it
/// (it committed after the statement's snapshot was taken) is not the
/// newest: the statement that writes the next state finds its seq taken
/// and writes nothing ([`move_cursor`] answers false), and the pop passes
/// the partition by.
fn take_cursor(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    log_start: i64,
    want: i64,
    tombstones: bool,
) -> Option<(Cursor, Scan, Vec<i64>)> {
    let sql = match tombstones {
        false => [
            query!("pop_take_cursor"),
            query!("cursor_rows/pop_take_cursor"),
        ],
        true => [
            query!("pop_take_cursor_deleted"),
            query!("cursor_rows/pop_take_cursor_deleted"),
        ],
    };
    let rows = cursors::exec(
        client,
        sql,
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
    let mut gone = Vec::new();
    let mut segs = Vec::new();
    for row in rows {
        if cursor.is_none() {
            cursor = Some(Cursor {
                held: cursors::Held::of(&row),
                head_offset: spi::opt(&row, "head_offset"),
                head_attempts: spi::col(&row, "head_attempts"),
                from: spi::col(&row, "from_offset"),
            });
            if tombstones {
                gone = spi::col(&row, "deleted");
            }
        }
        segs.extend(Segment::from_columns(&row));
    }
    let cursor = cursor?;
    let scan = Scan::of(segs.into_iter(), cursor.from, SCAN_CHUNK);
    Some((cursor, scan, gone))
}

/// Times one pop passes a whole batch of deleted messages on one partition
/// and reads it again before moving on to the next candidate.
const DELETED_RUNS: usize = 8;

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
    if switches::is_paused(client, Surface::Pop) {
        // Pop maintenance: nothing is handed out, nothing is written.
        return PopOut {
            lease_id: None,
            group: req.group.clone(),
            claims: Vec::new(),
            autopilot: req.autopilot,
            conflation: req.conflation.then_some(Conflated {
                applied: true,
                ..Conflated::default()
            }),
        };
    }
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
    cursors::exec(
        client,
        [
            query!("pop_create_cursor"),
            query!("cursor_rows/pop_create_cursor"),
        ],
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[cand.pid.into(), req.group.as_str().into(), committed.into()],
    );
    true
}

/// Moves the cursor to `end` (every offset up to it done), with no lease,
/// in place of `held`; false when another transaction had replaced it
/// (nothing written).
#[must_use]
fn pass_to(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    held: cursors::Held,
    end: i64,
) -> bool {
    cursors::try_replace(
        client,
        pid,
        group,
        held,
        [
            query!("pop_release_cursor"),
            query!("cursor_rows/pop_release_cursor"),
        ],
        &[spi::INT8],
        vec![end.into()],
    )
}

/// Hands `start..=end` out: under `lease` (its id and seconds), or, with
/// none (auto-ack), marked done at once. The deleted offsets `skip` (inside
/// the range, in order) are leased already done: they are not delivered,
/// and the cursor passes them once the rest is acknowledged. The new state
/// follows `held`, the one the take locked; false when another transaction
/// had replaced it (nothing written: the partition is not taken).
#[allow(clippy::too_many_arguments)]
#[must_use]
fn move_cursor(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    held: cursors::Held,
    lease: Option<(uuid::Uuid, i32)>,
    start: i64,
    end: i64,
    attempts: i32,
    skip: &[i64],
) -> bool {
    let Some((lease_id, lease_time)) = lease else {
        return pass_to(client, pid, group, held, end);
    };
    let mut state = vec![crate::engine::ack::OPEN; (end - start + 1) as usize];
    for o in skip {
        state[(o - start) as usize] = crate::engine::ack::DONE;
    }
    cursors::try_replace(
        client,
        pid,
        group,
        held,
        [
            query!("pop_lease_cursor"),
            query!("cursor_rows/pop_lease_cursor"),
        ],
        &[
            spi::INT8,
            spi::UUID,
            spi::INT4,
            spi::INT8,
            spi::INT8,
            spi::BYTEA,
            spi::INT4,
        ],
        vec![
            (start - 1).into(),
            pgrx::Uuid::from_bytes(*lease_id.as_bytes()).into(),
            lease_time.into(),
            start.into(),
            end.into(),
            state.into(),
            attempts.into(),
        ],
    )
}

/// A queue's hints for one pop: those kept for it and the group, of which
/// the pop offers the first `offered`.
struct Hinted {
    hints: Vec<i64>,
    offered: usize,
}

impl Hinted {
    /// The hints of `queue` for `req`'s group, as many offered as `req`
    /// may claim partitions; none for a pop of a named partition.
    fn of(req: &PopRequest, queue: &str) -> Hinted {
        let hints = match req.partition {
            None => positions::hints(queue, &req.group),
            Some(_) => Vec::new(),
        };
        let offered = hints.len().min(req.partitions.max(1) as usize);
        Hinted { hints, offered }
    }

    fn offered(&self) -> &[i64] {
        &self.hints[..self.offered]
    }

    fn unoffered(&self) -> &[i64] {
        &self.hints[self.offered..]
    }
}

pub fn pop(client: &mut SpiClient<'_>, req: &PopRequest) -> PopOut {
    let lease_id = (!req.auto_ack).then(uuid::Uuid::new_v4);
    if req.conflation && !spi::queen_column_exists(c"consumer_groups", c"conflation") {
        errors::raise(
            "0A000",
            "options.conflation: the database's queen schema predates it; run ALTER EXTENSION queen UPDATE",
        );
    }
    let mut out = PopOut {
        lease_id,
        group: req.group.clone(),
        claims: Vec::new(),
        autopilot: req.autopilot,
        conflation: req.conflation.then(Conflated::default),
    };
    let Some(mut g) = gather(client, req) else {
        // A namespace pop that names no queue: nothing to conflate either.
        if let Some(outcome) = out.conflation.as_mut() {
            outcome.applied = true;
        }
        return out;
    };
    let cands = std::mem::take(&mut g.cands);
    let mut round = Round {
        scanned: cands.iter().map(|c| (c.queue_idx, c.pid, c.lap)).collect(),
        tried: Vec::new(),
        served: Vec::new(),
        conflates: vec![None; g.qs.len()],
    };
    let tombstones = deleted::present();
    let mut remaining = req.batch;
    for cand in cands {
        if remaining == 0 || out.claims.len() as i64 >= req.partitions {
            break;
        }
        let queue = &g.qs[cand.queue_idx];
        round.tried.push(cand.pid);
        if cand.fresh && !create_cursor(client, req, queue, &cand) {
            continue;
        }
        let delay = queue.delayed_processing as i64;
        let c = Claiming {
            lease: lease_id.map(|id| (id, queue.lease_time)),
            visible_before: (delay > 0).then(|| g.now_us - delay * 1_000_000),
            tombstones,
            now_us: g.now_us,
        };
        let conflating = match out.conflation.as_mut() {
            Some(outcome) => *round.conflates[cand.queue_idx]
                .get_or_insert_with(|| group_conflates(client, req, queue.id, outcome, false)),
            None => false,
        };
        let claim = match out.conflation.as_mut() {
            Some(outcome) if conflating => claim_newest(client, req, queue, cand, &c, outcome),
            _ => claim_batch(client, req, queue, cand, &c, remaining),
        };
        if let Some(claim) = claim {
            remaining -= claim.delivered();
            if !round.served.contains(&queue.id) {
                round.served.push(queue.id);
            }
            out.claims.push(claim);
        }
    }
    finish(client, req, &g, &round, &mut out);
    out
}

/// A pop's queues and the partitions worth trying across them, in order.
struct Gathered {
    qs: Vec<PopQueue>,
    /// Each queue's hints, in turn: the pop offers as many of a queue's as
    /// it may claim partitions, from the front.
    hinted: Vec<Hinted>,
    /// The transaction's now() (µs).
    now_us: i64,
    cands: Vec<Candidate>,
    /// The queues whose windows found no candidate past the hints: their
    /// memo, if missing or old, is made at the end of the pop.
    sparse: Vec<usize>,
}

/// The queues of `req` and their candidates (None for a namespace pop that
/// finds no queue): each queue's window, then for the queues whose window
/// found nothing, all their partitions.
fn gather(client: &mut SpiClient<'_>, req: &PopRequest) -> Option<Gathered> {
    let (qs, mut now_us, mut cands, hinted) = match &req.queue {
        Some(name) => {
            let hinted = Hinted::of(req, name);
            let (qs, now_us, cands) = named_candidates(client, req, name, hinted.offered());
            (qs, now_us, cands, vec![hinted])
        }
        None => {
            let qs = namespace_queues(client, req);
            if qs.is_empty() {
                return None;
            }
            let hinted: Vec<Hinted> = qs.iter().map(|q| Hinted::of(req, &q.name)).collect();
            let (now_us, cands) = candidates(client, req, &qs, &hinted);
            (qs, now_us, cands, hinted)
        }
    };
    if req.partition.is_none() {
        for (idx, q) in qs.iter().enumerate() {
            positions::advance(&q.name, idx, &req.group, &cands);
        }
        // A queue whose window found nothing may hold messages past it:
        // its candidates come from all its partitions, after the others'.
        let dry: Vec<usize> = (0..qs.len())
            .filter(|&idx| !cands.iter().any(|c| c.queue_idx == idx))
            .collect();
        if !dry.is_empty() {
            // A survey due now comes first: the whole read then passes by
            // what it found done.
            for &idx in &dry {
                memo::survey_if_due(client, qs[idx].id, &qs[idx].name, &req.group);
            }
            let (at, more) = candidates_everywhere(client, req, &qs, &dry);
            if !more.is_empty() {
                now_us = at;
            }
            cands.extend(more.into_iter().map(|c| Candidate { lap: WHOLE, ..c }));
        }
    }
    let sparse: Vec<usize> = match req.partition {
        None => (0..qs.len())
            .filter(|&idx| {
                !cands
                    .iter()
                    .any(|c| c.queue_idx == idx && (c.lap == 0 || c.lap == 1))
            })
            .collect(),
        Some(_) => Vec::new(),
    };
    Some(Gathered {
        qs,
        hinted,
        now_us,
        cands,
        sparse,
    })
}

/// What a pop's claims left behind for its end.
struct Round {
    /// Every candidate (queue index, partition, lap), in scan order.
    scanned: Vec<(usize, i64, i32)>,
    tried: Vec<i64>,
    /// The queues the pop delivered from, each counted as one pop request.
    served: Vec<i64>,
    /// Each queue's conflation for this pop, read when first needed.
    conflates: Vec<Option<bool>>,
}

/// The end of a pop: each queue's hints for its next pop, the surveys of
/// its sparse queues, its request counts, and, for a conflating pop, what
/// the queues it did not come to would do.
fn finish(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    g: &Gathered,
    round: &Round,
    out: &mut PopOut,
) {
    if req.partition.is_none() {
        let limit = (req.partitions * settings::pop_candidates()) as usize;
        for (idx, (queue, h)) in g.qs.iter().zip(&g.hinted).enumerate() {
            let scanned: Vec<(i64, i32)> = round
                .scanned
                .iter()
                .filter(|(q, _, _)| *q == idx)
                .map(|&(_, pid, lap)| (pid, lap))
                .collect();
            let next = next_hints(&scanned, h.unoffered(), &round.tried, &out.claims, limit);
            if next.is_empty() && h.hints.is_empty() {
                continue;
            }
            positions::hint(&queue.name, &req.group, next);
        }
    }
    for &idx in &g.sparse {
        memo::survey_if_due(client, g.qs[idx].id, &g.qs[idx].name, &req.group);
    }
    count_requests(&g.qs, &round.served, &req.group);
    if let Some(outcome) = out.conflation.as_mut() {
        // A pop that claimed nothing still says whether it would conflate:
        // the queues it did not come to, or the queue it just made.
        for (q, known) in g.qs.iter().zip(&round.conflates) {
            if known.is_none() {
                group_conflates(client, req, q.id, outcome, true);
            }
        }
        if g.qs.is_empty() {
            outcome.applied = true;
        }
    }
}

/// A claim of a batch of up to `remaining` messages of `cand` from its
/// group's cursor: deleted messages at its front are passed (a batch wholly
/// deleted moves the cursor past it and is read again from there, at most
/// [`DELETED_RUNS`] times), the others leased done. None when nothing is
/// there, or another consumer holds the partition.
fn claim_batch(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    queue: &PopQueue,
    cand: Candidate,
    c: &Claiming,
    remaining: i64,
) -> Option<Claim> {
    for _ in 0..DELETED_RUNS {
        let (cursor, scan, gone) = take_cursor(
            client,
            cand.pid,
            &req.group,
            cand.log_start,
            remaining,
            c.tombstones,
        )?;
        let from = cursor.from;
        let segs = read_batch(client, cand.pid, from, remaining, c.visible_before, scan);
        let first = segs.first()?;
        let start = first.base_offset.max(from);
        let end = segs.last().unwrap().end_offset.min(start + remaining - 1);
        let (start, skip) = pass_deleted(&gone, start, end);
        if start > end {
            // The whole batch was deleted: the cursor moves past it, and
            // the partition is read again from there.
            if !pass_to(client, cand.pid, &req.group, cursor.held, end) {
                return None;
            }
            continue;
        }
        let attempts = cursor.attempts_from(start);
        if !move_cursor(
            client,
            cand.pid,
            &req.group,
            cursor.held,
            c.lease,
            start,
            end,
            attempts,
            &skip,
        ) {
            // Another pop took it between this one's snapshot and its
            // lock.
            return None;
        }
        let written_us = first.created_at_us;
        let claim = cand.claim(queue, start..=end, attempts, segs, skip);
        count_delivery(
            queue.id,
            &req.group,
            claim.delivered(),
            0,
            written_us,
            c.now_us,
        );
        return Some(claim);
    }
    None
}

/// The batch `start..=end` with the deleted offsets `gone` (in order) at
/// its front passed (the cursor starts after them): its new start, and the
/// deleted offsets left inside it, which are leased done.
fn pass_deleted(gone: &[i64], mut start: i64, end: i64) -> (i64, Vec<i64>) {
    let mut skip = gone;
    while let Some((&o, rest)) = skip.split_first() {
        if o < start {
            skip = rest;
        } else if o == start && start <= end {
            start += 1;
            skip = rest;
        } else {
            break;
        }
    }
    (start, skip.iter().copied().filter(|&o| o <= end).collect())
}

/// Counts a delivery of `delivered` messages (the first written at
/// `written_us`) and `completed` older ones a conflating pop passed.
fn count_delivery(
    queue_id: i64,
    group: &str,
    delivered: i64,
    completed: i64,
    written_us: i64,
    now_us: i64,
) {
    let lag_ms = ((now_us - written_us) / 1000).max(0);
    counters::add(
        queue_id,
        group,
        &[
            (Count::PopMessages, delivered),
            (Count::AckSuccess, completed),
            (Count::LagCount, 1),
            (Count::LagSumMs, lag_ms),
            (Count::LagMaxMs, lag_ms),
        ],
    );
}

/// Whether group `req.group` conflates on queue `queue_id` for a pop that
/// asks for it: queue mode always does; a group as it registered. A group
/// registered otherwise is delivered to as usual, and the answer says so
/// (`conflationConflict`). A group with no registration answers
/// `unregistered`: false where it claims (a pop that asks registers a new
/// group as conflating when it makes its first cursor, before this; a
/// group whose cursors a seek made is not registered and does not
/// conflate), true for the answer of a pop that claimed nothing (its first
/// cursor will register it so).
fn group_conflates(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    queue_id: i64,
    outcome: &mut Conflated,
    unregistered: bool,
) -> bool {
    if req.group == QUEUE_MODE {
        outcome.applied = true;
        return true;
    }
    let stored = exec(
        client,
        query!("group_conflation"),
        &[spi::INT8, spi::TEXT],
        &[queue_id.into(), req.group.as_str().into()],
    )
    .next()
    .map(|r| spi::col::<bool>(&r, "conflation"))
    .unwrap_or(unregistered);
    if stored {
        outcome.applied = true;
    } else {
        outcome.conflict = true;
    }
    stored
}

/// What a claim needs of the pop.
struct Claiming {
    lease: Option<(uuid::Uuid, i32)>,
    /// Messages written after this instant (µs) are not visible yet.
    visible_before: Option<i64>,
    tombstones: bool,
    now_us: i64,
}

/// A conflating claim of `cand`: its newest visible message, leased alone;
/// the cursor passes every older one at once (completed, counted in
/// `outcome`). None when the partition has nothing past the cursor, its
/// newest message was deleted (the cursor passes it too), or another
/// consumer holds it.
fn claim_newest(
    client: &mut SpiClient<'_>,
    req: &PopRequest,
    queue: &PopQueue,
    cand: Candidate,
    n: &Claiming,
    outcome: &mut Conflated,
) -> Option<Claim> {
    let (cursor, _, _) = take_cursor(client, cand.pid, &req.group, cand.log_start, 1, false)?;
    let newest = newest_offset(client, cand.pid, n.visible_before)?;
    if newest < cursor.from {
        return None;
    }
    let older = newest - cursor.from;
    if n.tombstones && deleted::is_deleted(client, cand.pid, newest) {
        if pass_to(client, cand.pid, &req.group, cursor.held, newest) {
            outcome.completed += older;
            counters::add(queue.id, &req.group, &[(Count::AckSuccess, older)]);
        }
        return None;
    }
    let scan = segments::scan_from(client, cand.pid, newest, 1, SCAN_CHUNK);
    let segs = read_batch(client, cand.pid, newest, 1, n.visible_before, scan);
    let first = segs.first()?;
    let attempts = match cursor.head_offset {
        Some(h) if h == newest => cursor.head_attempts + 1,
        _ => 1,
    };
    if !move_cursor(
        client,
        cand.pid,
        &req.group,
        cursor.held,
        n.lease,
        newest,
        newest,
        attempts,
        &[],
    ) {
        return None;
    }
    outcome.completed += older;
    count_delivery(
        queue.id,
        &req.group,
        1,
        older,
        first.created_at_us,
        n.now_us,
    );
    Some(cand.claim(queue, newest..=newest, attempts, segs, Vec::new()))
}

/// The newest offset of partition `pid` written before `visible_before`
/// (µs; None: any); None when it has none.
fn newest_offset(client: &mut SpiClient<'_>, pid: i64, visible_before: Option<i64>) -> Option<i64> {
    let horizon = visible_before.map(|us| crate::pg::time::us_to_timestamptz("visible_before", us));
    exec(
        client,
        query!("pop_newest_offset"),
        &[spi::INT8, spi::TIMESTAMPTZ],
        &[pid.into(), horizon.into()],
    )
    .next()
    .map(|r| spi::col(&r, "end_offset"))
}

/// A queue's hints for its next pop, `limit` at most: first the
/// hinted and whole-queue candidates of this pop's scan (`scanned`, pid and
/// lap) that it did not try, then the hints it did not offer (`unoffered`),
/// then the hinted and whole-queue candidates it claimed, which go to the
/// back. So the hints take turns, and a pop probes as many of them as it
/// may claim partitions, not all. A hint it tried in vain, or that its
/// scan no longer found a candidate, is dropped.
fn next_hints(
    scanned: &[(i64, i32)],
    unoffered: &[i64],
    tried: &[i64],
    claims: &[Claim],
    limit: usize,
) -> Vec<i64> {
    let hinted = |lap: i32| lap == -1 || lap == WHOLE;
    let claimed = |pid: i64| claims.iter().any(|c| c.partition_id == pid);
    let mut next: Vec<i64> = Vec::new();
    let untried = scanned
        .iter()
        .filter(|(pid, lap)| hinted(*lap) && !tried.contains(pid))
        .map(|(pid, _)| *pid);
    let unoffered = unoffered.iter().copied().filter(|pid| !tried.contains(pid));
    let back = scanned
        .iter()
        .filter(|(pid, lap)| hinted(*lap) && claimed(*pid))
        .map(|(pid, _)| *pid);
    for pid in untried.chain(unoffered).chain(back) {
        if next.len() == limit {
            break;
        }
        if !next.contains(&pid) {
            next.push(pid);
        }
    }
    next
}

/// One pop request for each queue a pop delivered from; an empty pop of
/// one queue counts as a request and an empty pop of it.
fn count_requests(qs: &[PopQueue], served: &[i64], group: &str) {
    match (served, qs) {
        ([], [only]) => counters::add(
            only.id,
            group,
            &[(Count::PopRequests, 1), (Count::PopEmpty, 1)],
        ),
        _ => {
            for &id in served {
                counters::add(id, group, &[(Count::PopRequests, 1)]);
            }
        }
    }
}
