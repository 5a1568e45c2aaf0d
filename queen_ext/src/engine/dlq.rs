//! Dead letters. A row is written narrow (a pointer to its frame) and widened
//! with the frame's contents only when its segment is about to be reclaimed,
//! so no failure disappears with its segment.

use std::collections::HashMap;

use pgrx::spi::SpiClient;

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::engine::counters::{self, Count};
use crate::engine::segments;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::splice::null;
/// Where a dead letter points.
pub struct Failed<'a> {
    pub queue_id: i64,
    pub pid: i64,
    pub group: &'a str,
    pub offset: i64,
    /// The message's transaction id; None reads it from its frame.
    pub transaction_id: Option<&'a str>,
    pub error: Option<&'a str>,
    pub attempts: i32,
}

/// What [`write`] did with a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The dead-letter row is written.
    Row,
    /// The segment is already gone: retention deleted the message (rule 1
    /// and max-wait eviction drop unconsumed messages by design), and a row
    /// written now would point at nothing.
    Gone,
    /// The message was deleted (it has a tombstone): a deleted message is
    /// never dead-lettered.
    Deleted,
}

/// Writes (or refreshes) the narrow dead-letter row of one message: a
/// pointer to its frame, the failure, and the transaction id that names it.
/// The segment holding the frame is locked (FOR SHARE) first, so a
/// retention step deleting it skips it (and a later step sees the row it
/// must carry forward), and a message delete of the same segment (which
/// locks it FOR NO KEY UPDATE) is ordered with this write: whichever comes
/// second waits for the other and then sees its tombstone or its row (the
/// delete deletes the row; this write, checking after its lock, writes
/// none).
pub fn write(client: &mut SpiClient<'_>, f: &Failed<'_>) -> Written {
    let covered = exec(
        client,
        query!("dlq_write_lock_segment"),
        &[spi::INT8, spi::INT8],
        &[f.pid.into(), f.offset.into()],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "end_offset"))
    .is_some_and(|end| end >= f.offset);
    if !covered {
        return Written::Gone;
    }
    if crate::engine::deleted::is_deleted(client, f.pid, f.offset) {
        return Written::Deleted;
    }
    let txn = match f.transaction_id {
        Some(t) => t.to_owned(),
        None => {
            let txn = segments::covering(client, f.pid, f.offset).and_then(|seg| {
                seg.frames()
                    .nth((f.offset - seg.base_offset) as usize)
                    .map(|fr| fr.transaction_id.to_owned())
            });
            txn.unwrap_or_else(|| {
                errors::corrupt(format!(
                    "message at offset {} of partition {} is gone",
                    f.offset, f.pid
                ))
            })
        }
    };
    exec(
        client,
        query!("dlq_write_row"),
        &[
            spi::INT8,
            spi::INT8,
            spi::TEXT,
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
            spi::INT4,
        ],
        &[
            f.queue_id.into(),
            f.pid.into(),
            f.group.into(),
            f.offset.into(),
            txn.into(),
            f.error.into(),
            f.attempts.into(),
        ],
    );
    counters::add(f.queue_id, f.group, &[(Count::Dlq, 1)]);
    Written::Row
}

/// Why a message was not dead-lettered: retention deleted it first (rule 1
/// and max-wait eviction drop unconsumed messages by design, counted in
/// retention_history). The ack is done: the cursor moves past it.
pub fn gone(pid: i64, offset: i64) -> String {
    format!("message at offset {offset} of partition {pid} was deleted by retention before it could be dead-lettered")
}

/// Why a message was not dead-lettered: it was deleted (DELETE
/// /messages/:partitionId/:transactionId). The ack is done: the cursor moves
/// past it.
pub fn deleted(pid: i64, offset: i64) -> String {
    format!("message at offset {offset} of partition {pid} was deleted; it is not dead-lettered")
}

/// The warning an ack answers for what [`write`] did (None: written).
pub fn warning(w: Written, pid: i64, offset: i64) -> Option<String> {
    match w {
        Written::Row => None,
        Written::Gone => Some(gone(pid, offset)),
        Written::Deleted => Some(deleted(pid, offset)),
    }
}

/// What a wide dead-letter row copies out of its frame: message id,
/// transaction id, trace id, payload, and its segment's created_at (µs).
type FrameCopy = (String, String, Option<String>, Vec<u8>, i64);

/// Widens every narrow dead letter of `pid` whose offset lies in
/// `from..=to`: message id, transaction id, trace id, payload and created_at
/// are copied out of the frames. Runs in the deleting step's transaction, so
/// an error anywhere leaves the rows and their segments as they were.
/// Answers how many rows of the range it left narrow (their frames were
/// already gone).
pub fn carry_forward(client: &mut SpiClient<'_>, pid: i64, from: i64, to: i64) -> usize {
    let narrow = narrow_rows(client, pid, from, to);
    if narrow.is_empty() {
        return 0;
    }
    let offsets: Vec<i64> = narrow.iter().map(|(_, o)| *o).collect();
    let mut frames = frame_copies(client, pid, offsets);
    let mut wide = Widened::default();
    for (id, offset) in &narrow {
        let Some(copy) = frames.remove(offset) else {
            // Its segment is already gone: nothing left to copy.
            continue;
        };
        wide.add(*id, copy);
    }
    let left = narrow.len() - wide.ids.len();
    if wide.ids.is_empty() {
        return left;
    }
    wide.write(client);
    left
}

/// What the frames at `offsets` of `pid` hold for their dead letters, by
/// offset; none for an offset whose segment is gone.
fn frame_copies(
    client: &mut SpiClient<'_>,
    pid: i64,
    offsets: Vec<i64>,
) -> HashMap<i64, FrameCopy> {
    let wanted: std::collections::HashSet<i64> = offsets.iter().copied().collect();
    let bases: Vec<i64> = exec(
        client,
        query!("dlq_carry_forward_bases"),
        &[spi::INT8, spi::INT8_ARRAY],
        &[pid.into(), offsets.into()],
    )
    .map(|r| spi::col::<i64>(&r, "base_offset"))
    .collect();
    let mut frames: HashMap<i64, FrameCopy> = HashMap::new();
    for seg in segments::load(client, pid, &bases) {
        for (i, f) in seg.frames().enumerate() {
            let offset = seg.base_offset + i as i64;
            if wanted.contains(&offset) {
                frames.insert(
                    offset,
                    (
                        queen_frames::id_text(&f.message_id),
                        f.transaction_id.to_owned(),
                        f.trace_id.map(|t| queen_frames::id_text(&t)),
                        f.payload.to_vec(),
                        seg.created_at_us,
                    ),
                );
            }
        }
    }
    frames
}

/// The dead letters a carry-forward widens, column by column.
#[derive(Default)]
struct Widened {
    ids: Vec<i64>,
    mids: Vec<String>,
    txns: Vec<String>,
    traces: Vec<Option<String>>,
    payloads: Vec<Vec<u8>>,
    created: Vec<i64>,
}

impl Widened {
    /// Adds the dead letter `id` with what its frame holds.
    fn add(&mut self, id: i64, (mid, txn, trace, payload, at): FrameCopy) {
        self.ids.push(id);
        self.mids.push(mid);
        self.txns.push(txn);
        self.traces.push(trace);
        self.payloads.push(payload);
        self.created.push(at);
    }

    /// Writes the copies into their rows, in one statement.
    fn write(self, client: &mut SpiClient<'_>) {
        exec(
            client,
            query!("dlq_carry_forward_widen"),
            &[
                spi::INT8_ARRAY,
                spi::TEXT_ARRAY,
                spi::TEXT_ARRAY,
                spi::TEXT_ARRAY,
                spi::BYTEA_ARRAY,
                spi::INT8_ARRAY,
            ],
            &[
                self.ids.into(),
                self.mids.into(),
                self.txns.into(),
                self.traces.into(),
                self.payloads.into(),
                self.created.into(),
            ],
        );
    }
}

/// The narrow dead letters of `pid` whose offsets lie in `from..=to`: (id,
/// offset).
pub fn narrow_rows(client: &mut SpiClient<'_>, pid: i64, from: i64, to: i64) -> Vec<(i64, i64)> {
    exec(
        client,
        query!("dlq_narrow_rows"),
        &[spi::INT8, spi::INT8, spi::INT8],
        &[pid.into(), from.into(), to.into()],
    )
    .map(|r| {
        (
            spi::col::<i64>(&r, "id"),
            spi::col::<i64>(&r, "message_offset"),
        )
    })
    .collect()
}

/// DLQ retention: deletes up to `max_rows` dead letters of `queue_id` that
/// failed before `cutoff`, and folds how many into the queue's
/// `pruned_failed_count`, in the same transaction. Answers how many went.
pub fn purge_step(
    client: &mut SpiClient<'_>,
    queue_id: i64,
    cutoff: pgrx::datum::TimestampWithTimeZone,
    max_rows: i32,
) -> i64 {
    exec(
        client,
        query!("dlq_purge_step"),
        &[spi::INT8, spi::TIMESTAMPTZ, spi::INT8],
        &[queue_id.into(), cutoff.into(), (max_rows as i64).into()],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "n"))
    .unwrap_or(0)
}

/// The cumulative count of dead letters DLQ retention removed from a queue.
pub fn pruned_failed_count(client: &mut SpiClient<'_>, queue_id: i64) -> i64 {
    exec(
        client,
        query!("dlq_pruned_failed_count"),
        &[spi::INT8],
        &[queue_id.into()],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "pruned_failed_count"))
    .unwrap_or(0)
}

/// A dead letter as a reader sees it: the wide columns, or the frame they
/// point at while the row is narrow.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetter {
    #[serde(skip)]
    pub id: i64,
    pub queue: String,
    pub partition: String,
    pub partition_id: String,
    pub consumer_group: Option<String>,
    pub offset: i64,
    pub transaction_id: String,
    pub message_id: Option<String>,
    pub trace_id: Option<String>,
    /// The payload exactly as it was pushed.
    pub data: Box<RawValue>,
    pub error_message: Option<String>,
    pub retry_count: i32,
    pub failed_at: String,
    pub created_at: Option<String>,
}

const DLQ_SELECT: &str = query!("dlq_rows");

/// The dead letters of `rows` (a statement answering `dlq_rows.sql`'s
/// columns), their payloads read from their frames where still narrow.
pub(crate) fn read_rows(
    client: &mut SpiClient<'_>,
    rows: pgrx::spi::SpiTupleTable<'_>,
) -> Vec<DeadLetter> {
    let mut out: Vec<DeadLetter> = rows
        .map(|r| {
            let group: String = spi::col(&r, "consumer_group");
            let payload: Option<Vec<u8>> = spi::opt(&r, "payload");
            DeadLetter {
                id: spi::col(&r, "id"),
                queue: spi::col(&r, "queue"),
                partition: spi::col(&r, "partition"),
                partition_id: spi::col::<i64>(&r, "partition_id").to_string(),
                consumer_group: (group != crate::wire::QUEUE_MODE).then_some(group),
                offset: spi::col(&r, "message_offset"),
                transaction_id: spi::col(&r, "transaction_id"),
                message_id: spi::opt(&r, "message_id"),
                trace_id: spi::opt(&r, "trace_id"),
                data: payload.as_deref().map_or_else(null, raw_payload),
                error_message: spi::opt(&r, "error"),
                retry_count: spi::col(&r, "attempts"),
                failed_at: crate::pg::time::micros_to_iso(spi::col::<i64>(&r, "failed_us")),
                created_at: spi::opt::<i64>(&r, "created_us").map(crate::pg::time::micros_to_iso),
            }
        })
        .collect();
    hydrate(client, &mut out);
    out
}

/// A stored payload as the JSON it is. Every push checks that a payload is
/// one JSON document in UTF-8; bytes that are not (a frame damaged on disk)
/// answer null rather than failing the whole read.
pub fn raw_payload(bytes: &[u8]) -> Box<RawValue> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| RawValue::from_string(s.to_owned()).ok())
        .unwrap_or_else(null)
}

/// Fills narrow rows from their frames.
fn hydrate(client: &mut SpiClient<'_>, rows: &mut [DeadLetter]) {
    for row in rows.iter_mut().filter(|r| r.created_at.is_none()) {
        let pid: i64 = row.partition_id.parse().unwrap();
        let Some(seg) = crate::engine::segments::covering(client, pid, row.offset) else {
            continue;
        };
        let frame = seg
            .frames()
            .nth((row.offset - seg.base_offset) as usize)
            .map(|f| {
                (
                    queen_frames::id_text(&f.message_id),
                    f.trace_id.map(|t| queen_frames::id_text(&t)),
                    raw_payload(f.payload),
                )
            });
        if let Some((id, trace, data)) = frame {
            row.message_id = Some(id);
            row.trace_id = trace;
            row.data = data;
            row.created_at = Some(crate::pg::time::micros_to_iso(seg.created_at_us));
        }
    }
}

/// Locks partitions ascending by id (FOR UPDATE: a retention step, which
/// holds its partition KEY SHARE while it widens dead-letter rows, and a
/// push wait for it): what a path that changes dead letters takes before
/// their rows. Answers the ids still there.
pub fn lock_partitions(client: &mut SpiClient<'_>, pids: &[i64]) -> Vec<i64> {
    let mut sorted = pids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    exec(
        client,
        query!("dlq_lock_partitions"),
        &[spi::INT8_ARRAY],
        &[sorted.into()],
    )
    .map(|r| spi::col::<i64>(&r, "id"))
    .collect()
}

/// The dead letters of (partition, transaction id), any group. With `lock`
/// the partition is locked first, then the rows (the lock order).
pub fn by_message(client: &mut SpiClient<'_>, pid: i64, txn: &str, lock: bool) -> Vec<DeadLetter> {
    if lock {
        lock_partitions(client, &[pid]);
    }
    let sql_text = format!(
        "{DLQ_SELECT} WHERE d.partition_id = $1 AND d.transaction_id = $2 ORDER BY d.id{}",
        if lock {
            " FOR UPDATE OF d SKIP LOCKED"
        } else {
            ""
        }
    );
    let rows = client
        .update(sql_text.as_str(), None, &[pid.into(), txn.into()])
        .unwrap_or_else(|e| panic!("{e}"));
    read_rows(client, rows)
}

/// Matching dead letters of a queue, oldest failure first, locked; with
/// how many match (up to `limit`) once they are locked. Counted after the
/// lock, in a snapshot that holds every locked row, so the count is never
/// below the rows returned; rows locked by another retrier are counted and
/// not returned.
pub fn for_retry(
    client: &mut SpiClient<'_>,
    queue_id: i64,
    group: Option<&str>,
    limit: i64,
) -> (Vec<DeadLetter>, i64) {
    // The lock order: the rows' partitions first, then the rows, of those
    // partitions only.
    let pids: Vec<i64> = exec(
        client,
        query!("dlq_for_retry_partitions"),
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[queue_id.into(), group.into(), limit.into()],
    )
    .map(|r| spi::col::<i64>(&r, "partition_id"))
    .collect();
    let pids = lock_partitions(client, &pids);
    let sql_text = format!(
        "{DLQ_SELECT} WHERE d.queue_id = $1 AND ($2::text IS NULL OR d.consumer_group = $2)
          AND d.partition_id = ANY($4)
          ORDER BY d.failed_at, d.id LIMIT $3 FOR UPDATE OF d SKIP LOCKED"
    );
    let rows = client
        .update(
            sql_text.as_str(),
            None,
            &[queue_id.into(), group.into(), limit.into(), pids.into()],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let locked = read_rows(client, rows);
    let matched: i64 = exec(
        client,
        query!("dlq_for_retry"),
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[queue_id.into(), group.into(), limit.into()],
    )
    .next()
    .and_then(|r| spi::opt(&r, "matched"))
    .unwrap_or(0);
    (locked, matched)
}

pub fn delete_rows(client: &mut SpiClient<'_>, ids: &[i64]) -> i64 {
    exec(
        client,
        "DELETE FROM queen.log_dlq WHERE id = ANY($1) RETURNING 1",
        &[spi::INT8_ARRAY],
        &[ids.to_vec().into()],
    )
    .len() as i64
}

/// Re-pushes dead letters into their partitions (under their transaction
/// ids, past deduplication) and removes their rows. A dead letter of a
/// deleted message is left out (never replayed). Answers what was retried.
pub fn retry(client: &mut SpiClient<'_>, rows: &[DeadLetter]) -> Vec<Value> {
    let rows: Vec<&DeadLetter> = rows
        .iter()
        .filter(|r| {
            let pid: i64 = r.partition_id.parse().expect("a partition id");
            !crate::engine::deleted::is_deleted(client, pid, r.offset)
        })
        .collect();
    let mut groups: Vec<crate::wire::push::GroupIn> = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let item = crate::wire::push::ItemIn {
            index,
            txn: Some(row.transaction_id.clone()),
            trace: row
                .trace_id
                .as_deref()
                .map(|t| *crate::wire::json::parse_uuid("traceId", t).as_bytes()),
            payload: row.data.get().as_bytes().to_vec(),
            encrypted: false,
            message_id: None,
        };
        match groups
            .iter_mut()
            .find(|g| g.queue == row.queue && g.partition == row.partition)
        {
            Some(g) => g.items.push(item),
            None => groups.push(crate::wire::push::GroupIn {
                queue: row.queue.clone(),
                partition: row.partition.clone(),
                items: vec![item],
                packed: None,
            }),
        }
    }
    if groups.is_empty() {
        return Vec::new();
    }
    use crate::catalog::switches::{refuse_if_paused, Surface};
    refuse_if_paused(client, Surface::Push);
    let pushed = crate::engine::push::push_groups(client, &groups, None, false);
    delete_rows(client, &rows.iter().map(|r| r.id).collect::<Vec<_>>());
    rows.iter()
        .zip(pushed)
        .map(|(row, p)| {
            json!({
                "partitionId": row.partition_id,
                "transactionId": row.transaction_id,
                "consumerGroup": row.consumer_group,
                "failedOffset": row.offset,
                "offset": p.offset,
                "messageId": p.message_id.map(|m| queen_frames::id_text(&m)),
            })
        })
        .collect()
}

/// The most dead letters one purge call deletes; the answer says when more
/// are left.
pub const PURGE_MAX_ROWS: i64 = 10_000;

/// Where a moved dead letter goes instead of its own queue and partition.
#[derive(Default)]
pub struct MoveTo<'a> {
    pub queue: Option<&'a str>,
    pub partition: Option<&'a str>,
}

/// What a move did: the dead letter it took and the push that put it back.
pub struct Moved {
    pub row: DeadLetter,
    pub pushed: crate::wire::push::ItemOut,
}

/// The transaction id a moved dead letter is pushed under: the same row
/// moved twice is a duplicate.
pub fn moved_transaction_id(row_id: i64) -> String {
    format!("dlq:{row_id}")
}

/// Moves one dead letter back into the log, in the caller's transaction.
/// The lock order holds: the partitions are locked first (the row's own and
/// the one it goes to, when that exists, ascending by id), then the row (a
/// concurrent move of the same row waits, then finds it gone), as a
/// retention step widening the row holds its partition before the row. The
/// row is read again under its lock; a message that was deleted is not
/// moved. Pushes the message into its queue and partition (or `to`'s)
/// under the transaction id `dlq:<row id>` through deduplication, and
/// deletes the row. None when there is no such row (never was, already
/// moved, purged, its queue deleted, or its message deleted).
pub fn move_back(client: &mut SpiClient<'_>, row_id: i64, to: &MoveTo<'_>) -> Option<Moved> {
    crate::catalog::switches::refuse_if_paused(client, crate::catalog::switches::Surface::Push);
    let (pid, queue, partition) = exec(
        client,
        query!("dlq_move_source"),
        &[spi::INT8],
        &[row_id.into()],
    )
    .next()
    .map(|r| {
        (
            spi::col::<i64>(&r, "partition_id"),
            spi::col::<String>(&r, "queue"),
            spi::col::<String>(&r, "partition"),
        )
    })?;
    let target_queue = to.queue.unwrap_or(&queue);
    let target_partition = to.partition.unwrap_or(&partition);
    if !lock_move_partitions(client, pid, target_queue, target_partition) {
        // The partition went with its queue meanwhile.
        return None;
    }
    let rows = exec(
        client,
        query!("dlq_move_lock"),
        &[spi::INT8],
        &[row_id.into()],
    );
    let row = read_rows(client, rows).into_iter().next()?;
    if crate::engine::deleted::is_deleted(client, pid, row.offset) {
        return None;
    }
    let group = moved_push(&row, target_queue, target_partition);
    let pushed = crate::engine::push::push_groups(client, &[group], None, true)
        .into_iter()
        .next()
        .expect("one item pushed answers one result");
    exec(
        client,
        query!("dlq_delete_row"),
        &[spi::INT8],
        &[row.id.into()],
    );
    Some(Moved { row, pushed })
}

/// Locks the partition `pid` of a dead letter and, when it exists, the
/// partition `partition` of queue `queue` it moves to, ascending by id;
/// false when `pid` is gone.
fn lock_move_partitions(
    client: &mut SpiClient<'_>,
    pid: i64,
    queue: &str,
    partition: &str,
) -> bool {
    exec(
        client,
        query!("dlq_move_lock_partitions"),
        &[spi::INT8, spi::UUID, spi::TEXT, spi::TEXT],
        &[
            pid.into(),
            crate::catalog::queues::default_tenant().into(),
            queue.into(),
            partition.into(),
        ],
    )
    .map(|r| spi::col::<i64>(&r, "id"))
    .collect::<Vec<_>>()
    .contains(&pid)
}

/// The push that puts the dead letter `row` back, into `partition` of
/// `queue`, under the transaction id `dlq:<row id>`.
fn moved_push(row: &DeadLetter, queue: &str, partition: &str) -> crate::wire::push::GroupIn {
    let item = crate::wire::push::ItemIn {
        index: 0,
        txn: Some(moved_transaction_id(row.id)),
        trace: row
            .trace_id
            .as_deref()
            .map(|t| *crate::wire::json::parse_uuid("traceId", t).as_bytes()),
        payload: row.data.get().as_bytes().to_vec(),
        encrypted: false,
        message_id: None,
    };
    crate::wire::push::GroupIn {
        queue: queue.to_owned(),
        partition: partition.to_owned(),
        items: vec![item],
        packed: None,
    }
}

impl Moved {
    /// The move's answer as Queen's server gives it.
    pub fn to_json(&self) -> Value {
        let p = &self.pushed;
        let status = if p.duplicate { "duplicate" } else { "queued" };
        let message_id = p.message_id.map(|m| queen_frames::id_text(&m));
        json!({
            "success": true,
            "result": if p.duplicate { "duplicate" } else { "moved" },
            "queue": &*p.queue,
            "partition": &*p.partition,
            "partitionId": p.partition_id.to_string(),
            "consumerGroup": self.row.consumer_group.as_deref().unwrap_or(crate::wire::QUEUE_MODE),
            "dlqId": self.row.id.to_string(),
            "originalTransactionId": self.row.transaction_id,
            "replayedAs": {
                "index": 0, "message_id": message_id, "transaction_id": p.transaction_id,
                "queueName": &*p.queue, "status": status, "offset": p.offset,
            },
            "dlqRowRemoved": true,
        })
    }
}

/// The newest dead letter of (partition, transaction id), any group.
pub fn newest_of_message(client: &mut SpiClient<'_>, pid: i64, txn: &str) -> Option<i64> {
    exec(
        client,
        query!("dlq_newest_of_message"),
        &[spi::INT8, spi::TEXT],
        &[pid.into(), txn.into()],
    )
    .next()
    .map(|r| spi::col::<i64>(&r, "id"))
}

/// Deletes up to [`PURGE_MAX_ROWS`] dead letters of a queue (one group, or
/// all) and folds how many into its `pruned_failed_count`, as DLQ
/// retention does, in one statement. Answers how many went.
pub fn purge(client: &mut SpiClient<'_>, queue_id: i64, group: Option<&str>) -> i64 {
    exec(
        client,
        query!("dlq_purge_group"),
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[queue_id.into(), group.into(), PURGE_MAX_ROWS.into()],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "n"))
    .unwrap_or(0)
}
