//! Acknowledgements, lease renewal and dead-lettering.
//!
//! An ack names a message by (partitionId, transactionId); the transaction id
//! resolves to an offset through the hash sidecar, or, for a leased message
//! whose sidecar row was purged already, through the lease's own segments.
//! One that can not be resolved counts as not acked: redelivery over loss.
//! The ack path takes consumer row locks only, ordered by (partition_id,
//! consumer_group), and never a partition lock. Typed acks in, typed answers
//! out: the bodies and answers are `wire::ack`.

use std::collections::{BTreeMap, HashMap, HashSet};

use pgrx::spi::SpiClient;

use crate::catalog::cursors;
use crate::engine::counters::{self, Count};
use crate::engine::dlq;
use crate::engine::push::txn_hash;
use crate::engine::segments;
use crate::engine::soft_commit::{self, Soft};
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::ack::{AckIn, AckOut, Renewed, Status};

/// One byte of lease state per offset of a leased batch.
pub(crate) const OPEN: u8 = 0;
pub(crate) const DONE: u8 = 1;
const FAILED: u8 = 2;
const RETRY: u8 = 3;

struct ConsumerRow {
    /// The state the lock took, which the ack's next state replaces.
    held: cursors::Held,
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

/// Locks the newest state of the cursor of (pid, group) and reads, in the
/// same statement, the sidecar rows covering its lease (none when it holds
/// no lease); None when the group has no cursor on the partition. A state
/// replaced by another ack or a pop while this one waited for its lock is
/// found replaced (`cursors::replaced_since`): the statement is made
/// again, and its snapshot sees the state that took its place. The read
/// uses the statement's snapshot: a lease granted meanwhile may cover
/// messages pushed after it, but no one acking now can hold those, and
/// what is not found counts as not acked.
fn lock_consumer(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
) -> Option<(ConsumerRow, Vec<SidecarRow>)> {
    if !cursors::as_states() {
        // A row updated in place: a lock that waited reads the row as the
        // other transaction left it.
        return lock_newest_state(client, pid, group);
    }
    for _ in 0..cursors::STATE_ROUNDS {
        match lock_newest_state(client, pid, group) {
            // Granted after another transaction replaced it: the next
            // statement sees the new one.
            Some(found) if cursors::replaced_since(client, found.0.held) => {}
            Some(found) => return Some(found),
            // No state: no cursor, or the retention cycle deleted the state
            // (replaced before) while this one waited for it.
            None if !cursors::exists(client, pid, group) => return None,
            None => {}
        }
    }
    errors::retry_needed("an ack: its cursor's state kept changing under it; retry")
}

/// [`lock_consumer`]'s one try: None when the cursor's newest state was
/// replaced while this transaction waited for it, or there is no cursor.
fn lock_newest_state(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
) -> Option<(ConsumerRow, Vec<SidecarRow>)> {
    let mut consumer: Option<ConsumerRow> = None;
    let mut covering = Vec::new();
    for row in cursors::exec(
        client,
        [
            query!("ack_lock_consumer"),
            query!("cursor_rows/ack_lock_consumer"),
        ],
        &[spi::INT8, spi::TEXT],
        &[pid.into(), group.into()],
    ) {
        if consumer.is_none() {
            let lease: Option<pgrx::Uuid> = spi::opt(&row, "lease_id");
            consumer = Some(ConsumerRow {
                held: cursors::Held::of(&row),
                queue_id: spi::col(&row, "queue_id"),
                committed: spi::col(&row, "committed"),
                lease_id: lease.map(|l| uuid::Uuid::from_bytes(*l.as_bytes())),
                lease_start: spi::opt::<i64>(&row, "lease_start").unwrap_or(0),
                lease_end: spi::opt::<i64>(&row, "lease_end").unwrap_or(-1),
                state: spi::opt::<Vec<u8>>(&row, "lease_state").unwrap_or_default(),
                head_offset: spi::opt(&row, "head_offset"),
                head_attempts: spi::col(&row, "head_attempts"),
                retry_limit: spi::col(&row, "retry_limit"),
                retry_delay_ms: spi::col(&row, "retry_delay"),
            });
        }
        if let Some(base) = spi::opt::<i64>(&row, "base_offset") {
            covering.push((base, spi::col::<Vec<Option<i64>>>(&row, "txn_hashes")));
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
            spi::col::<Vec<Option<i64>>>(&row, "txn_hashes"),
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
    soft_commit::first_write(Soft::Ack, || ack(client, acks))
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
        lease_released: false,
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
    // No rows cover a cursor that holds no lease. The sidecar is purged by
    // age, oldest rows first (retention's rule 3): a lease of messages older
    // than its window starts above what is left of it.
    let whole = covering
        .iter()
        .map(|(base, _)| *base)
        .min()
        .is_some_and(|base| base <= c.lease_start);
    let mut in_lease = match_hashes(
        covering.into_iter(),
        &by_hash(txns),
        Some((c.lease_start, c.lease_end)),
    );
    if c.lease_id.is_some() && !whole {
        let missing: Vec<&str> = txns
            .iter()
            .copied()
            .filter(|t| !in_lease.contains_key(*t))
            .collect();
        if !missing.is_empty() {
            in_lease.extend(from_frames(client, pid, c, &missing));
        }
    }
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

/// Offsets of the lease of `c` holding `txns`, read from the lease's own
/// segments: for the ids whose sidecar rows were purged before they were
/// acked. At most one segment per leased offset is read, so no more than the
/// pop that leased them read (`queen.pop_max_batch` offsets at most).
fn from_frames<'a>(
    client: &mut SpiClient<'_>,
    pid: i64,
    c: &ConsumerRow,
    txns: &[&'a str],
) -> HashMap<&'a str, Vec<i64>> {
    let wanted: HashSet<&'a str> = txns.iter().copied().collect();
    let leased = c.lease_end - c.lease_start + 1;
    let scan = segments::scan_from(client, pid, c.lease_start, leased, leased);
    let mut out: HashMap<&'a str, Vec<i64>> = HashMap::new();
    for seg in &scan.segments {
        for (i, frame) in seg.frames().enumerate() {
            let offset = seg.base_offset + i as i64;
            if offset < c.lease_start || offset > c.lease_end {
                continue;
            }
            if let Some(&t) = wanted.get(frame.transaction_id) {
                out.entry(t).or_default().push(offset);
            }
        }
    }
    out
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
/// writes its row first) and answers it; `named`: the message is the one
/// the ack names by its transaction id.
fn mark(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    c: &mut ConsumerRow,
    a: &AckIn,
    offset: i64,
    named: bool,
) -> AckOut {
    let i = (offset - c.lease_start) as usize;
    let counted = match a.status {
        Status::Completed => Count::AckSuccess,
        _ => Count::AckFailed,
    };
    counters::add(c.queue_id, group, &[(counted, 1)]);
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
                // A batch's other messages are written under their own ids,
                // read from their segment.
                transaction_id: named.then_some(a.transaction_id.as_str()),
                error: a.error.as_deref(),
                attempts: c.head_attempts.max(1),
            };
            let written = dlq::write(client, &failed);
            out.dead_lettered = written == dlq::Written::Row;
            out.warning = dlq::warning(written, pid, offset);
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
    counters::add(c.queue_id, group, &[(Count::AckRequests, 1)]);
    let txns: Vec<&str> = items.iter().map(|a| a.transaction_id.as_str()).collect();
    let (in_lease, outside) = locate(client, pid, &c, covering, &txns);
    let mut results = Vec::with_capacity(items.len());
    let mut errors_at: HashMap<i64, Option<String>> = HashMap::new();
    let mut dirty = false;
    let mut marked = Vec::new();
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
        marked.push(results.len());
        results.push(mark(client, pid, group, &mut c, a, offset, true));
        errors_at.insert(offset, a.error.clone());
        dirty = true;
    }
    if dirty && settle(client, pid, group, &mut c, &errors_at, &mut results) {
        for i in marked {
            results[i].lease_released = true;
        }
    }
    results
}

/// Locks the newest state of the cursor of (pid, group) as an ack does, so
/// that no pop takes the partition until this transaction ends (a stream's
/// idle flush, which holds no lease, keeps a batch from starting under it).
/// False when the group has no cursor there.
pub fn hold_cursor(client: &mut SpiClient<'_>, pid: i64, group: &str) -> bool {
    lock_consumer(client, pid, group).is_some()
}

/// What a batch ack did.
pub struct Through {
    /// Messages of the lease the ack answered.
    pub acked: i64,
    pub lease_released: bool,
    pub dead_lettered: bool,
}

/// Answers open messages of the lease `a` names with the status of `a`
/// (a stream cycle's ack of its source batch): with `release`, every one
/// of them, and the lease ends; without, the first `count` of the lease
/// (through the message `a` names when no count is given), and the rest
/// stay leased. The message `a` names must be in the lease: Err when the
/// lease is not held (never granted, released, or granted again to another
/// consumer) or the message is not in it, and nothing is written then.
pub fn ack_through(
    client: &mut SpiClient<'_>,
    a: &AckIn,
    release: bool,
    count: Option<i64>,
) -> Result<Through, String> {
    let (pid, group) = (a.partition_id, a.group.as_str());
    let Some((mut c, covering)) = lock_consumer(client, pid, group) else {
        return Err(format!(
            "partition {pid} has no cursor for consumer group {group:?}: nothing was delivered to it"
        ));
    };
    counters::add(c.queue_id, group, &[(Count::AckRequests, 1)]);
    let txn = a.transaction_id.as_str();
    let (in_lease, _) = locate(client, pid, &c, covering, &[txn]);
    let Some(&named) = in_lease.get(txn).and_then(|at| at.last()) else {
        return Err(match c.lease_id {
            None => format!("partition {pid} holds no lease for consumer group {group:?} (released, or never granted)"),
            Some(_) => format!("transaction id {txn:?} is not in the lease of partition {pid}"),
        });
    };
    check_held(a, &c, named, pid, group)?;
    if c.state[(named - c.lease_start) as usize] != OPEN {
        // A cycle made again after it committed (its answer lost) keeps
        // its lease without release_lease: refused, not applied twice.
        return Err(format!(
            "transaction id {txn:?} of partition {pid} was acknowledged already"
        ));
    }
    let through = match (release, count) {
        (true, _) => c.lease_end,
        (false, Some(n)) => (c.lease_start + n - 1).min(c.lease_end),
        (false, None) => named,
    };
    let mut errors_at: HashMap<i64, Option<String>> = HashMap::new();
    let mut out = answer(a, None);
    let mut acked = 0;
    for offset in c.lease_start..=through {
        if c.state[(offset - c.lease_start) as usize] == OPEN {
            let marked = mark(client, pid, group, &mut c, a, offset, offset == named);
            out.dead_lettered |= marked.dead_lettered;
            errors_at.insert(offset, a.error.clone());
            acked += 1;
        }
    }
    let mut results = [out];
    let lease_released = acked > 0 && settle(client, pid, group, &mut c, &errors_at, &mut results);
    Ok(Through {
        acked,
        lease_released,
        dead_lettered: results[0].dead_lettered,
    })
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
                r.dead_lettered = written == dlq::Written::Row;
                r.warning = dlq::warning(written, pid, f);
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
/// exhausted. True when the lease ended.
fn settle(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    c: &mut ConsumerRow,
    errors_at: &HashMap<i64, Option<String>>,
    results: &mut [AckOut],
) -> bool {
    advance(c);
    let answered = c.state.iter().all(|s| *s != OPEN);
    if answered {
        let (head, retry_in_ms) = next_head(client, pid, group, c, errors_at, results);
        cursors::replace(
            client,
            pid,
            group,
            c.held,
            [
                query!("ack_settle_retry"),
                query!("cursor_rows/ack_settle_retry"),
            ],
            &[spi::INT8, spi::INT8, spi::INT4, spi::INT4],
            vec![
                c.committed.into(),
                head.0.into(),
                head.1.into(),
                retry_in_ms.into(),
            ],
        );
    } else {
        cursors::replace(
            client,
            pid,
            group,
            c.held,
            [
                query!("ack_settle_advance"),
                query!("cursor_rows/ack_settle_advance"),
            ],
            &[spi::INT8, spi::BYTEA],
            vec![c.committed.into(), c.state.clone().into()],
        );
    }
    answered
}

/// Extends every partition lease held under `lease_id`, by `seconds` or by
/// each queue's lease time.
pub fn renew(client: &mut SpiClient<'_>, lease_id: uuid::Uuid, seconds: Option<i32>) -> Renewed {
    if !cursors::as_states() {
        let expiries: Vec<i64> = exec(
            client,
            query!("cursor_rows/ack_renew"),
            &[spi::UUID, spi::INT4],
            &[
                pgrx::Uuid::from_bytes(*lease_id.as_bytes()).into(),
                seconds.into(),
            ],
        )
        .map(|r| spi::col::<i64>(&r, "lease_expires_us"))
        .collect();
        return Renewed {
            lease_id,
            renewed: expiries.len(),
            expires_us: expiries.iter().max().copied(),
        };
    }
    // A state another transaction replaced while this one waited for it
    // answers no expiry, and is renewed by the next round, which sees the
    // new one and leaves out the states this call put in: (cursor, seq).
    let mut expiries: Vec<i64> = Vec::new();
    let (mut renewed, mut seqs): (Vec<i64>, Vec<i64>) = (Vec::new(), Vec::new());
    cursors::until_settled(
        || {
            let mut rows = 0;
            for r in exec(
                client,
                query!("ack_renew"),
                &[spi::UUID, spi::INT4, spi::INT8_ARRAY, spi::INT8_ARRAY],
                &[
                    pgrx::Uuid::from_bytes(*lease_id.as_bytes()).into(),
                    seconds.into(),
                    renewed.clone().into(),
                    seqs.clone().into(),
                ],
            ) {
                rows += 1;
                let Some(expiry) = spi::opt::<i64>(&r, "lease_expires_us") else {
                    continue;
                };
                let cursor = spi::col::<i64>(&r, "cursor_id");
                crate::catalog::replaced::note(cursor);
                renewed.push(cursor);
                seqs.push(spi::col::<i64>(&r, "seq"));
                expiries.push(expiry);
            }
            rows
        },
        "renewing a lease",
    );
    Renewed {
        lease_id,
        renewed: expiries.len(),
        expires_us: expiries.iter().max().copied(),
    }
}
