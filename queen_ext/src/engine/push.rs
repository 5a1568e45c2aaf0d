//! The write path. Offsets are assigned here and nowhere else, under the
//! `log_partitions` row lock; a push touching several partitions locks them
//! ascending by id in one statement. One segment row per (push call,
//! partition). A push inserts and locks: it never updates its partition's
//! row, so a snapshot held open elsewhere leaves no versions behind it (the
//! partition's last offset is its newest segment's end). Typed groups in,
//! typed answers out: the bodies and answers are `wire::push` and
//! `wire::binary`.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use pgrx::spi::{SpiClient, SpiHeapTupleData};
use queen_frames::{FrameRef, FLAG_ENCRYPTED};

use crate::catalog::ends;
use crate::catalog::queues;
use crate::engine::counters::{self, Count};
use crate::engine::known_partitions;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::json::check_name;
use crate::wire::push::{GroupIn, ItemIn, ItemOut};

/// The 64-bit hash the sidecar keeps for a transaction id.
pub fn txn_hash(txn: &str) -> i64 {
    xxhash_rust::xxh3::xxh3_64(txn.as_bytes()) as i64
}

struct LockedPartition {
    /// The partition's last offset, read after the lock (see [`read_tails`]).
    last_offset: i64,
    txns_start: i64,
    /// The caller-supplied ids this push gave the partition so far: a later
    /// group for the same partition finds them as duplicates.
    taken: HashMap<String, Original>,
}

impl LockedPartition {
    /// A partition row the push just locked; its last offset is read next.
    fn from_row(row: &SpiHeapTupleData<'_>) -> LockedPartition {
        LockedPartition {
            last_offset: -1,
            txns_start: spi::col(row, "txns_start"),
            taken: HashMap::new(),
        }
    }
}

/// The partitions a push holds locked, by id.
type Locked = BTreeMap<i64, LockedPartition>;

/// `ids` ascending, each once: the order partitions are locked in.
fn ascending(ids: &[i64]) -> Vec<i64> {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
}

/// A group made ready outside any lock: ids minted, transaction ids known,
/// the segment compressed. Offsets are not in the frames, so the blob does
/// not depend on where it lands.
struct Prepared {
    ids: Vec<[u8; 16]>,
    txns: Vec<String>,
    /// The whole group's segment, every item in it.
    blob: Vec<u8>,
}

fn prepare(g: &GroupIn, producer: Option<&str>) -> Prepared {
    let ids: Vec<[u8; 16]> = g
        .items
        .iter()
        .map(|it| it.message_id.unwrap_or_else(queen_frames::new_message_id))
        .collect();
    let txns: Vec<String> = g
        .items
        .iter()
        .zip(&ids)
        .map(|(it, id)| it.txn.clone().unwrap_or_else(|| queen_frames::id_text(id)))
        .collect();
    // A client's packed frame is kept byte for byte unless a producer
    // identity has to be stamped in.
    let blob = match &g.packed {
        Some(z) if producer.is_none() => z.clone(),
        _ => encode(g, &ids, &txns, producer, |_| true),
    };
    Prepared { ids, txns, blob }
}

/// The segment of the items `keep` selects.
fn encode(
    g: &GroupIn,
    ids: &[[u8; 16]],
    txns: &[String],
    producer: Option<&str>,
    keep: impl Fn(usize) -> bool,
) -> Vec<u8> {
    let frames = g
        .items
        .iter()
        .enumerate()
        .filter(|(k, _)| keep(*k))
        .map(|(k, it)| FrameRef {
            flags: if it.encrypted { FLAG_ENCRYPTED } else { 0 },
            message_id: ids[k],
            trace_id: it.trace,
            transaction_id: &txns[k],
            producer,
            payload: &it.payload,
        });
    let frames: Vec<FrameRef<'_>> = frames.collect();
    queen_frames::segment::encode_segment(frames.iter())
        .unwrap_or_else(|e| errors::invalid("items", e))
}

/// Locks the partitions this backend remembers for `groups`, ascending by id,
/// in one statement; None (and the guesses forgotten) unless every group
/// knows its partition and finds it there under its own names. Answers as
/// [`lock_existing`] does. Rows a failed guess locked stay locked: the push
/// locks the rest on its way on.
fn lock_known(client: &mut SpiClient<'_>, groups: &[GroupIn]) -> Option<(Vec<(i32, i64)>, Locked)> {
    let pids = known_partitions::recall(groups)?;
    let rows = exec(
        client,
        query!("push_lock_known"),
        &[spi::INT8_ARRAY],
        &[ascending(&pids).into()],
    );
    // The tenant is checked here: in the statement, the planner may read
    // every queue of the tenant to join them.
    let tenant = queues::default_tenant();
    let mut names: HashMap<i64, (String, String, i32)> = HashMap::with_capacity(rows.len());
    let mut locked = BTreeMap::new();
    for row in rows {
        let pid: i64 = spi::col(&row, "id");
        if spi::col::<pgrx::Uuid>(&row, "tenant_id") != tenant {
            continue;
        }
        names.insert(
            pid,
            (
                spi::col(&row, "queue"),
                spi::col(&row, "name"),
                spi::col(&row, "dedup_window_seconds"),
            ),
        );
        locked.insert(pid, LockedPartition::from_row(&row));
    }
    let mut windows_pids = Vec::with_capacity(groups.len());
    for (g, pid) in groups.iter().zip(&pids) {
        match names.get(pid) {
            Some((queue, name, window)) if *queue == g.queue && *name == g.partition => {
                windows_pids.push((*window, *pid));
            }
            _ => {
                known_partitions::forget(groups);
                return None;
            }
        }
    }
    Some((windows_pids, locked))
}

/// Resolves every (queue name, partition name) of `groups` and locks the
/// partitions ascending by id, in one statement; None unless every queue and
/// partition already exists. Answers per group its queue's dedup window and
/// its partition id, with the locked rows.
fn lock_existing(
    client: &mut SpiClient<'_>,
    groups: &[GroupIn],
) -> Option<(Vec<(i32, i64)>, Locked)> {
    let queues: Vec<&str> = groups.iter().map(|g| g.queue.as_str()).collect();
    let names: Vec<&str> = groups.iter().map(|g| g.partition.as_str()).collect();
    let rows = exec(
        client,
        query!("push_lock_existing"),
        &[spi::UUID, spi::TEXT_ARRAY, spi::TEXT_ARRAY],
        &[queues::default_tenant().into(), queues.into(), names.into()],
    );
    let mut per_group: Vec<Option<(i32, i64)>> = vec![None; groups.len()];
    let mut locked = BTreeMap::new();
    for row in rows {
        let ord: i64 = spi::col(&row, "ord");
        let pid: i64 = spi::col(&row, "id");
        per_group[(ord - 1) as usize] = Some((spi::col(&row, "dedup_window_seconds"), pid));
        locked.insert(pid, LockedPartition::from_row(&row));
    }
    let per_group: Option<Vec<(i32, i64)>> = per_group.into_iter().collect();
    per_group.map(|g| (g, locked))
}

/// Resolves every (queue id, partition name) to a partition id, creating the
/// missing partitions in (queue, name) order.
fn resolve_partitions(
    client: &mut SpiClient<'_>,
    keys: &[(i64, String)],
) -> HashMap<(i64, String), i64> {
    const SELECT: &str = query!("push_resolve_partitions");
    let qids: Vec<i64> = keys.iter().map(|k| k.0).collect();
    let names: Vec<String> = keys.iter().map(|k| k.1.clone()).collect();
    let read = |client: &mut SpiClient<'_>| {
        let mut out = HashMap::new();
        for row in exec(
            client,
            SELECT,
            &[spi::INT8_ARRAY, spi::TEXT_ARRAY],
            &[qids.clone().into(), names.clone().into()],
        ) {
            let qid: i64 = spi::col(&row, "queue_id");
            let name: String = spi::col(&row, "name");
            let id: i64 = spi::col(&row, "id");
            out.insert((qid, name), id);
        }
        out
    };
    // A partition named by several groups is one key.
    let distinct = keys.iter().collect::<std::collections::HashSet<_>>().len();
    let mut found = read(client);
    if found.len() < distinct {
        let mut missing: Vec<&(i64, String)> =
            keys.iter().filter(|k| !found.contains_key(*k)).collect();
        missing.sort();
        missing.dedup();
        for (qid, name) in missing {
            exec(
                client,
                query!("push_create_partition"),
                &[spi::INT8, spi::TEXT],
                &[(*qid).into(), name.as_str().into()],
            );
        }
        found = read(client);
        if found.len() < distinct {
            errors::retry_needed(
                "a queue was deleted while this push created its partitions; retry the push",
            );
        }
    }
    found
}

/// Locks the partitions ascending by id, in one statement.
fn lock_partitions(client: &mut SpiClient<'_>, ids: &[i64]) -> BTreeMap<i64, LockedPartition> {
    let sorted = ascending(ids);
    let rows = exec(
        client,
        query!("push_lock_partitions"),
        &[spi::INT8_ARRAY],
        &[sorted.clone().into()],
    );
    let mut out = BTreeMap::new();
    for row in rows {
        let id: i64 = spi::col(&row, "id");
        out.insert(id, LockedPartition::from_row(&row));
    }
    if out.len() != sorted.len() {
        errors::retry_needed(
            "a partition was deleted while this push was writing to it; retry the push",
        );
    }
    out
}

/// The earlier copy a duplicate stands for.
#[derive(Clone, Copy)]
struct Original {
    message_id: Option<[u8; 16]>,
    offset: i64,
}

/// The sidecar rows of partition $1 from offset $3 on, younger than $4
/// seconds, whose caller ids hash to one of $2. The partition and the
/// watermark filter what the hash index finds (`+ 0` keeps them off the
/// primary key): ANDed with a primary-key range, the probe would read every
/// sidecar row of the partition.
pub(crate) const DEDUP_PROBE: &str = query!("push_dedup_probe");

/// Finds which of `txns` (caller-supplied ids) already sit in the partition
/// within the dedup window. Hash hits are confirmed against the frames; a
/// hit whose segment is already gone is trusted (the message existed).
fn probe_duplicates(
    client: &mut SpiClient<'_>,
    pid: i64,
    txns_start: i64,
    window_secs: i32,
    txns: &[&str],
) -> HashMap<String, Original> {
    let hashes: Vec<i64> = txns.iter().map(|t| txn_hash(t)).collect();
    let wanted: HashMap<i64, Vec<&str>> = txns.iter().fold(HashMap::new(), |mut m, t| {
        m.entry(txn_hash(t)).or_insert_with(Vec::new).push(*t);
        m
    });
    let rows = exec(
        client,
        DEDUP_PROBE,
        &[spi::INT8, spi::INT8_ARRAY, spi::INT8, spi::INT4],
        &[
            pid.into(),
            hashes.into(),
            txns_start.into(),
            window_secs.into(),
        ],
    );
    let candidates = hash_hits(rows, &wanted);
    if candidates.is_empty() {
        return HashMap::new();
    }
    confirm_hits(client, pid, candidates, &wanted)
}

/// The offsets of the sidecar `rows` whose caller id hashes to a key of
/// `wanted`: (segment base, offset, hash).
fn hash_hits(
    rows: pgrx::spi::SpiTupleTable<'_>,
    wanted: &HashMap<i64, Vec<&str>>,
) -> Vec<(i64, i64, i64)> {
    let mut candidates: Vec<(i64, i64, i64)> = Vec::new();
    for row in rows {
        let base: i64 = spi::col(&row, "base_offset");
        let row_hashes: Vec<Option<i64>> = spi::col(&row, "txn_hashes");
        for (i, h) in row_hashes.iter().enumerate() {
            if let Some(h) = h {
                if wanted.contains_key(h) {
                    candidates.push((base, base + i as i64, *h));
                }
            }
        }
    }
    candidates
}

/// The originals the hash hits `candidates` (segment base, offset, hash)
/// of partition `pid` confirm, by caller id: a hit whose frame's id is one
/// its hash stands for in `wanted` is that id's; a hit whose segment is
/// gone stands for every id of its hash.
fn confirm_hits(
    client: &mut SpiClient<'_>,
    pid: i64,
    candidates: Vec<(i64, i64, i64)>,
    wanted: &HashMap<i64, Vec<&str>>,
) -> HashMap<String, Original> {
    let mut found = HashMap::new();
    let mut bases: Vec<i64> = candidates.iter().map(|c| c.0).collect();
    bases.sort_unstable();
    bases.dedup();
    let mut frames_at: HashMap<i64, ([u8; 16], String)> = HashMap::new();
    for seg in crate::engine::segments::load(client, pid, &bases) {
        for (i, f) in seg.frames().enumerate() {
            frames_at.insert(
                seg.base_offset + i as i64,
                (f.message_id, f.transaction_id.to_owned()),
            );
        }
    }
    for (_, offset, h) in candidates {
        match frames_at.get(&offset) {
            Some((id, txn)) => {
                if wanted[&h].contains(&txn.as_str()) {
                    found.entry(txn.clone()).or_insert(Original {
                        message_id: Some(*id),
                        offset,
                    });
                }
            }
            None => {
                for t in &wanted[&h] {
                    found.entry((*t).to_owned()).or_insert(Original {
                        message_id: None,
                        offset,
                    });
                }
            }
        }
    }
    found
}

/// Writes every group; answers one `ItemOut` per item, in request order.
/// `dedup` false stores every item even when its transaction id was seen
/// (a retry of a dead letter re-pushes its message under the same id).
///
/// The segments are compressed before any lock is taken. A push to one
/// existing partition that needs no duplicate check is one statement; a
/// push to existing partitions locks them all in one statement; only a
/// first push creates queues and partitions first.
pub fn push_groups(
    client: &mut SpiClient<'_>,
    groups: &[GroupIn],
    producer: Option<&str>,
    dedup: bool,
) -> Vec<ItemOut> {
    push_groups_each(client, groups, &vec![producer; groups.len()], dedup)
}

/// [`push_groups`] with a producer per group (`producers[k]` stamps the
/// frames of `groups[k]`): one push, its partitions locked together.
pub fn push_groups_each(
    client: &mut SpiClient<'_>,
    groups: &[GroupIn],
    producers: &[Option<&str>],
    dedup: bool,
) -> Vec<ItemOut> {
    for p in producers.iter().flatten() {
        check_name("producer", p);
    }
    let cut = cut_large(groups, producers);
    let (groups, producers) = match &cut {
        Some((g, p)) => (g.as_slice(), p.as_slice()),
        None => (groups, producers),
    };
    let prepared: Vec<Prepared> = groups
        .iter()
        .zip(producers)
        .map(|(g, p)| prepare(g, *p))
        .collect();
    if let ([g], [pre]) = (groups, prepared.as_slice()) {
        if let Some(out) = push_one_statement(client, g, pre, dedup) {
            return out;
        }
    }
    let (windows_pids, mut locked) = match lock_known(client, groups) {
        Some(found) => found,
        None => {
            let found = match lock_existing(client, groups) {
                Some(found) => found,
                None => create_and_lock(client, groups),
            };
            known_partitions::remember(groups, found.0.iter().map(|w| w.1));
            found
        }
    };
    read_tails(client, &mut locked);
    let mut out = Vec::with_capacity(groups.iter().map(|g| g.items.len()).sum());
    let mut writes: Vec<Write<'_>> = Vec::with_capacity(groups.len());
    for (((g, pre), (window, pid)), producer) in groups
        .iter()
        .zip(&prepared)
        .zip(windows_pids)
        .zip(producers)
    {
        let part = locked.get_mut(&pid).expect("locked above");
        let ids = CallerIds {
            window_secs: if dedup { window } else { 0 },
            keep: window > 0,
        };
        let (results, write) = plan_group(client, g, pre, pid, part, ids, *producer);
        out.extend(results);
        writes.extend(write);
    }
    write_all(client, &writes);
    out.sort_by_key(|o| o.index);
    out
}

/// The bytes `it` takes as a frame of a segment (uncompressed), stamped
/// with `producer`; a transaction id to be minted counts as its 36 bytes.
fn frame_bytes(it: &ItemIn, producer: Option<&str>) -> usize {
    FrameRef {
        flags: 0,
        message_id: [0; 16],
        trace_id: it.trace,
        transaction_id: it.txn.as_deref().unwrap_or(""),
        producer,
        payload: &it.payload,
    }
    .encoded_len()
        + if it.txn.is_none() { 36 } else { 0 }
}

/// `groups` with each group whose frames pass `queen.segment_max_bytes` cut
/// into consecutive groups of its partition, its items in order (they take
/// consecutive segments, so their offsets follow one another as in one
/// segment); None when no group is that large. A cut group's client-packed
/// frame is not kept: each part is framed anew. A message larger than a
/// reader opens (`MAX_SEGMENT_RAW_BYTES`) is refused (22023).
fn cut_large<'p>(
    groups: &[GroupIn],
    producers: &[Option<&'p str>],
) -> Option<(Vec<GroupIn>, Vec<Option<&'p str>>)> {
    let max = crate::pg::settings::segment_max_bytes();
    // Each group's bytes, every message checked on the way; nothing is
    // allocated for a push that needs no cut.
    let totals: Vec<usize> = groups
        .iter()
        .zip(producers)
        .map(|(g, p)| {
            g.items
                .iter()
                .map(|it| {
                    let b = frame_bytes(it, *p);
                    if b > queen_frames::MAX_SEGMENT_RAW_BYTES {
                        errors::invalid(
                            &format!("items[{}].payload", it.index),
                            format!(
                                "{} bytes is more than a message may take ({} bytes)",
                                it.payload.len(),
                                queen_frames::MAX_SEGMENT_RAW_BYTES
                            ),
                        );
                    }
                    b
                })
                .sum()
        })
        .collect();
    if totals.iter().all(|&t| t <= max) {
        return None;
    }
    let (mut out, mut out_producers) = (Vec::new(), Vec::new());
    for ((g, p), &total) in groups.iter().zip(producers).zip(&totals) {
        if total <= max {
            out.push(g.clone());
            out_producers.push(*p);
            continue;
        }
        let mut part = GroupIn {
            queue: g.queue.clone(),
            partition: g.partition.clone(),
            items: Vec::new(),
            packed: None,
        };
        let mut bytes = 0;
        for it in &g.items {
            let b = frame_bytes(it, *p);
            if !part.items.is_empty() && bytes + b > max {
                let next = GroupIn {
                    queue: g.queue.clone(),
                    partition: g.partition.clone(),
                    items: Vec::new(),
                    packed: None,
                };
                out.push(std::mem::replace(&mut part, next));
                out_producers.push(*p);
                bytes = 0;
            }
            part.items.push(it.clone());
            bytes += b;
        }
        out.push(part);
        out_producers.push(*p);
    }
    Some((out, out_producers))
}

/// One segment to append to a locked partition, its offsets decided.
struct Write<'a> {
    pid: i64,
    base: i64,
    count: i32,
    blob: std::borrow::Cow<'a, [u8]>,
    hashes: Vec<i64>,
    dedup_hashes: Vec<i64>,
    /// Whether the dedup hashes are kept (an empty list is kept as none).
    keep_dedup: bool,
}

/// Appends the segments, as few statements as there are segments for one
/// partition (a partition is written at most once per statement, its
/// segments in the order given). Each must land where its partition's lock
/// said.
fn write_all(client: &mut SpiClient<'_>, writes: &[Write<'_>]) {
    if let [w] = writes {
        let dedup = (w.keep_dedup && !w.dedup_hashes.is_empty()).then(|| w.dedup_hashes.clone());
        let target = Target::Locked(w.pid);
        if append_segment(client, target, w.count, &w.blob, &w.hashes, dedup)
            != Some((w.pid, w.base))
        {
            moved(w.pid);
        }
        return;
    }
    let mut rounds: Vec<Vec<&Write<'_>>> = Vec::new();
    let mut seen: HashMap<i64, usize> = HashMap::new();
    for w in writes {
        let n = seen.entry(w.pid).or_insert(0);
        if rounds.len() <= *n {
            rounds.push(Vec::new());
        }
        rounds[*n].push(w);
        *n += 1;
    }
    for round in rounds {
        append_many(client, &round);
    }
}

/// Reads the last offset of every locked partition, in a statement of its
/// own after the lock's: a lock that waited for another push's commit was
/// taken by a statement whose snapshot predates that push's segment, and
/// this one's does not.
fn read_tails(client: &mut SpiClient<'_>, locked: &mut Locked) {
    let ids: Vec<i64> = locked.keys().copied().collect();
    for row in exec(
        client,
        query!("push_tails"),
        &[spi::INT8_ARRAY],
        &[ids.into()],
    ) {
        let pid: i64 = spi::col(&row, "id");
        if let Some(part) = locked.get_mut(&pid) {
            part.last_offset = spi::col(&row, "last_offset");
        }
    }
}

/// A partition the push held locked took a write from elsewhere.
fn moved(pid: i64) -> ! {
    errors::retry_needed(format!(
        "partition {pid} moved while this push held its lock; retry the push"
    ))
}

/// One statement appending `writes` (each to another partition).
fn append_many(client: &mut SpiClient<'_>, writes: &[&Write<'_>]) {
    let mut pids = Vec::with_capacity(writes.len());
    let mut counts = Vec::with_capacity(writes.len());
    let mut blobs: Vec<&[u8]> = Vec::with_capacity(writes.len());
    let (mut h_from, mut h_to, mut d_from, mut d_to) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut hashes, mut dedup): (Vec<i64>, Vec<i64>) = (Vec::new(), Vec::new());
    for w in writes {
        pids.push(w.pid);
        counts.push(w.count);
        blobs.push(&w.blob);
        h_from.push(hashes.len() as i32 + 1);
        hashes.extend_from_slice(&w.hashes);
        h_to.push(hashes.len() as i32);
        d_from.push(dedup.len() as i32 + 1);
        if w.keep_dedup {
            dedup.extend_from_slice(&w.dedup_hashes);
        }
        d_to.push(dedup.len() as i32);
    }
    let rows = exec(
        client,
        query!("push_append_many"),
        &[
            spi::INT8_ARRAY,
            spi::INT4_ARRAY,
            spi::BYTEA_ARRAY,
            spi::INT4_ARRAY,
            spi::INT4_ARRAY,
            spi::INT4_ARRAY,
            spi::INT4_ARRAY,
            spi::INT8_ARRAY,
            spi::INT8_ARRAY,
        ],
        &[
            pids.into(),
            counts.into(),
            blobs.into(),
            h_from.into(),
            h_to.into(),
            d_from.into(),
            d_to.into(),
            hashes.into(),
            dedup.into(),
        ],
    );
    let mut landed: HashMap<i64, i64> = HashMap::with_capacity(writes.len());
    for row in rows {
        let pid: i64 = spi::col(&row, "id");
        let frames: i32 = spi::col(&row, "frames");
        counters::add(
            spi::col::<i64>(&row, "queue_id"),
            "",
            &[
                (Count::PushRequests, 1),
                (Count::PushMessages, frames as i64),
            ],
        );
        let base: i64 = spi::col(&row, "base");
        ends::raise(pid, base + frames as i64 - 1);
        landed.insert(pid, base);
    }
    for w in writes {
        if landed.get(&w.pid) != Some(&w.base) {
            moved(w.pid);
        }
    }
}

/// A push into one partition as one statement: the partition found by name
/// and bumped, the segment and its sidecar row written. None when the
/// partition does not exist yet, the queue deduplicates these ids, or the
/// lock waited for another push (the general path handles all three).
fn push_one_statement(
    client: &mut SpiClient<'_>,
    g: &GroupIn,
    pre: &Prepared,
    dedup: bool,
) -> Option<Vec<ItemOut>> {
    let hashes: Vec<i64> = pre.txns.iter().map(|t| txn_hash(t)).collect();
    let supplied = supplied_hashes(g, &hashes);
    let target = Target::Named {
        queue: &g.queue,
        partition: &g.partition,
        check_dedup: dedup && supplied.is_some(),
    };
    let (pid, base) = append_segment(
        client,
        target,
        g.items.len() as i32,
        &pre.blob,
        &hashes,
        supplied,
    )?;
    let (queue, partition): (Rc<str>, Rc<str>) =
        (g.queue.as_str().into(), g.partition.as_str().into());
    Some(
        g.items
            .iter()
            .enumerate()
            .map(|(k, it)| ItemOut {
                index: it.index,
                queue: Rc::clone(&queue),
                partition: Rc::clone(&partition),
                partition_id: pid,
                message_id: Some(pre.ids[k]),
                transaction_id: pre.txns[k].clone(),
                offset: Some(base + k as i64),
                duplicate: false,
            })
            .collect(),
    )
}

/// Creates what the groups' queues and partitions lack (queues in name
/// order, then partitions), then locks the partitions ascending by id.
fn create_and_lock(client: &mut SpiClient<'_>, groups: &[GroupIn]) -> (Vec<(i32, i64)>, Locked) {
    let mut queue_names: Vec<&str> = groups.iter().map(|g| g.queue.as_str()).collect();
    queue_names.sort_unstable();
    queue_names.dedup();
    let queue_ids = queues::resolve_for_push(client, &queue_names);
    if queue_ids.len() < queue_names.len() {
        errors::retry_needed("a queue was deleted while this push was creating it; retry the push");
    }
    let keys: Vec<(i64, String)> = groups
        .iter()
        .map(|g| (queue_ids[&g.queue].0, g.partition.clone()))
        .collect();
    let partition_ids = resolve_partitions(client, &keys);
    let windows_pids: Vec<(i32, i64)> = groups
        .iter()
        .zip(&keys)
        .map(|(g, k)| (queue_ids[&g.queue].1, partition_ids[k]))
        .collect();
    let pids: Vec<i64> = windows_pids.iter().map(|w| w.1).collect();
    (windows_pids, lock_partitions(client, &pids))
}

/// Of `hashes` (one per item of `g`), those of the caller-supplied
/// transaction ids (the index duplicate checks probe); None when there are
/// none.
fn supplied_hashes(g: &GroupIn, hashes: &[i64]) -> Option<Vec<i64>> {
    let supplied: Vec<i64> = g
        .items
        .iter()
        .zip(hashes)
        .filter(|(it, _)| it.txn.is_some())
        .map(|(_, h)| *h)
        .collect();
    (!supplied.is_empty()).then_some(supplied)
}

/// What a group does with its caller-supplied transaction ids.
#[derive(Clone, Copy)]
struct CallerIds {
    /// Checked against the sidecar within this many seconds (0: not checked).
    window_secs: i32,
    /// Kept in the dedup index, for later pushes to check against and for
    /// acks outside a lease to find. A queue without a dedup window keeps
    /// none: nothing will check against them, and such an ack finds its id
    /// as it finds a minted one.
    keep: bool,
}

/// A group's items sorted into the new ones and the duplicates, its offsets
/// taken from the locked partition; answers the results and the segment to
/// append (none when every item is a duplicate).
fn plan_group<'a>(
    client: &mut SpiClient<'_>,
    g: &GroupIn,
    pre: &'a Prepared,
    pid: i64,
    part: &mut LockedPartition,
    ids: CallerIds,
    producer: Option<&str>,
) -> (Vec<ItemOut>, Option<Write<'a>>) {
    // Deduplicate caller-supplied ids: against the sidecar, against the
    // groups before this one for the same partition, and within the group.
    let mut earlier: HashMap<String, Original> = HashMap::new();
    if ids.window_secs > 0 {
        let supplied: Vec<&str> = g.items.iter().filter_map(|it| it.txn.as_deref()).collect();
        if !supplied.is_empty() {
            earlier = probe_duplicates(client, pid, part.txns_start, ids.window_secs, &supplied);
            earlier.extend(part.taken.iter().map(|(t, o)| (t.clone(), *o)));
        }
    }
    let base = part.last_offset + 1;
    let Sorted {
        results,
        kept,
        hashes,
        dedup_hashes,
    } = sort_items(g, pre, pid, base, &ids, &earlier);
    if ids.window_secs > 0 {
        for (it, r) in g.items.iter().zip(&results) {
            if let (Some(txn), false, Some(offset)) = (&it.txn, r.duplicate, r.offset) {
                part.taken.insert(
                    txn.clone(),
                    Original {
                        message_id: r.message_id,
                        offset,
                    },
                );
            }
        }
    }
    if hashes.is_empty() {
        return (results, None);
    }
    // The prepared segment holds every item; one without the duplicates is
    // compressed again.
    let blob = if hashes.len() == g.items.len() {
        std::borrow::Cow::Borrowed(pre.blob.as_slice())
    } else {
        std::borrow::Cow::Owned(encode(g, &pre.ids, &pre.txns, producer, |k| kept[k]))
    };
    let count = hashes.len() as i32;
    part.last_offset = base + count as i64 - 1;
    let write = Write {
        pid,
        base,
        count,
        blob,
        hashes,
        keep_dedup: !dedup_hashes.is_empty(),
        dedup_hashes,
    };
    (results, Some(write))
}

/// A group's items sorted into the new ones, which take offsets from `base`
/// on, and the duplicates of an earlier push or of an item before them,
/// answered with the original's id and offset.
struct Sorted {
    results: Vec<ItemOut>,
    kept: Vec<bool>,
    hashes: Vec<i64>,
    dedup_hashes: Vec<i64>,
}

/// Sorts the items of `g` (see [`Sorted`]).
fn sort_items(
    g: &GroupIn,
    pre: &Prepared,
    pid: i64,
    base: i64,
    ids: &CallerIds,
    earlier: &HashMap<String, Original>,
) -> Sorted {
    let mut in_batch: HashMap<&str, usize> = HashMap::new();
    let mut results: Vec<ItemOut> = Vec::with_capacity(g.items.len());
    let mut kept: Vec<bool> = Vec::with_capacity(g.items.len());
    let mut hashes: Vec<i64> = Vec::with_capacity(g.items.len());
    let mut dedup_hashes: Vec<i64> = Vec::new();
    let (queue, partition): (Rc<str>, Rc<str>) =
        (g.queue.as_str().into(), g.partition.as_str().into());
    for (k, it) in g.items.iter().enumerate() {
        let txn = pre.txns[k].as_str();
        let mut result = ItemOut {
            index: it.index,
            queue: Rc::clone(&queue),
            partition: Rc::clone(&partition),
            partition_id: pid,
            message_id: Some(pre.ids[k]),
            transaction_id: txn.to_owned(),
            offset: None,
            duplicate: false,
        };
        kept.push(false);
        if it.txn.is_some() && ids.window_secs > 0 {
            if let Some(orig) = earlier.get(txn) {
                result.duplicate = true;
                result.message_id = orig.message_id;
                result.offset = Some(orig.offset);
                results.push(result);
                continue;
            }
            if let Some(&first) = in_batch.get(txn) {
                result.duplicate = true;
                result.message_id = results[first].message_id;
                result.offset = results[first].offset;
                results.push(result);
                continue;
            }
            in_batch.insert(txn, results.len());
        }
        result.offset = Some(base + hashes.len() as i64);
        kept[k] = true;
        let hash = txn_hash(txn);
        hashes.push(hash);
        if it.txn.is_some() && ids.keep {
            dedup_hashes.push(hash);
        }
        results.push(result);
    }
    Sorted {
        results,
        kept,
        hashes,
        dedup_hashes,
    }
}

/// Where `append_segment` writes.
pub enum Target<'a> {
    /// A partition the caller has locked.
    Locked(i64),
    /// A partition by name, when it exists and, if `check_dedup`, its queue
    /// keeps no dedup window (the caller's ids need no check).
    Named {
        queue: &'a str,
        partition: &'a str,
        check_dedup: bool,
    },
}

/// Inserts one segment after the partition's newest, and its sidecar row,
/// in one statement: offsets are assigned here and nowhere else, under the
/// row lock the statement takes (`Named`) or this transaction holds
/// (`Locked`). Answers the partition id and the segment's base offset; None
/// when a `Named` target does not qualify, or its snapshot can not see the
/// push it waited for (nothing is written then: the general path writes
/// it). created_at never goes backwards within a partition (retention
/// relies on it).
pub fn append_segment(
    client: &mut SpiClient<'_>,
    target: Target<'_>,
    count: i32,
    blob: &[u8],
    hashes: &[i64],
    dedup_hashes: Option<Vec<i64>>,
) -> Option<(i64, i64)> {
    // By id the caller has decided which ids to keep; by name, a queue
    // without a dedup window keeps none (see `write_group`).
    const BY_ID: &str = query!("push_append_by_id");
    const BY_NAME: &str = query!("push_append_by_name");
    let mut types = vec![spi::INT4, spi::BYTEA, spi::INT8_ARRAY, spi::INT8_ARRAY];
    let mut args = vec![
        count.into(),
        blob.into(),
        hashes.to_vec().into(),
        dedup_hashes.into(),
    ];
    let text = match target {
        Target::Locked(pid) => {
            types.push(spi::INT8);
            args.push(pid.into());
            BY_ID
        }
        Target::Named {
            queue,
            partition,
            check_dedup,
        } => {
            types.extend([spi::UUID, spi::TEXT, spi::TEXT, spi::BOOL]);
            args.extend([
                queues::default_tenant().into(),
                queue.into(),
                partition.into(),
                check_dedup.into(),
            ]);
            BY_NAME
        }
    };
    // By name, a lock that waited for another push wrote nothing (its
    // snapshot predates that push's segment): the transaction holds the
    // partition now, and the statement made once more reads its offsets
    // with a snapshot that sees the other push. A snapshot that stays (a
    // REPEATABLE READ transaction) meets the same segment again, and the
    // general path answers.
    for _ in 0..2 {
        let mut rows = exec(client, text, &types, &args);
        let row = rows.next()?;
        let Some(base) = spi::opt::<i64>(&row, "base") else {
            continue;
        };
        counters::add(
            spi::col::<i64>(&row, "queue_id"),
            "",
            &[
                (Count::PushRequests, 1),
                (Count::PushMessages, count as i64),
            ],
        );
        let pid = spi::col::<i64>(&row, "id");
        ends::raise(pid, base + count as i64 - 1);
        return Some((pid, base));
    }
    None
}
