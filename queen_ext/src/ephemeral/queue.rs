//! A live ephemeral queue's rows: its tallies (locked by every write), its
//! partitions' bounds, and the bounded cleanup steps that keep storage bounded:
//! messages every group has passed, expired ones, the oldest ones under
//! `dropOldest`, and the rows of ended incarnations.

use pgrx::pg_sys;
use pgrx::spi::SpiClient;

use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec_keyed};

/// Whether the schema keeps a queue's tallies, a partition's bounds and a
/// group's cursor as versions (0.6.0 on). A database not yet updated keeps
/// them as rows updated in place: this library serves it with the
/// statements of `sql/queries/ephemeral_rows/`, as the version before did,
/// and the message path deletes the messages it passes.
pub fn as_versions() -> bool {
    spi::queen_table_exists(c"ephemeral_tallies")
}

/// Whether the schema keeps a lease as a series of versions (0.9.0 on): a
/// delivery, a hand-back and a settlement each write one, and the newest is
/// the lease's state. Before, a lease is a row updated and deleted.
pub fn leases_as_log() -> bool {
    let Some(oid) = spi::queen_table_oid(c"ephemeral_leases") else {
        return false;
    };
    // SAFETY: a catalogue lookup by the relation's oid and a column name.
    unsafe { pg_sys::get_attnum(oid, c"ver".as_ptr()) != pg_sys::InvalidAttrNumber as i16 }
}

/// Runs `versions` on a schema of versions, else `rows` (the same
/// parameters and columns), planned by key (`spi::exec_keyed`): a newest
/// version is the first entry of a backward probe of its key.
pub fn run<'conn>(
    c: &mut SpiClient<'conn>,
    [versions, rows]: [&'static str; 2],
    types: &[pgrx::pg_sys::PgOid],
    args: &[pgrx::datum::DatumWithOid<'_>],
) -> pgrx::spi::SpiTupleTable<'conn> {
    let sql = if as_versions() { versions } else { rows };
    spi::exec_keyed(c, sql, types, args)
}

/// A live queue's tallies, as read under its lock.
#[derive(Debug, Clone)]
pub struct State {
    pub incarnation: i64,
    pub depth: i64,
    pub bytes: i64,
    pub drops_bounds: i64,
    pub drops_ttl: i64,
    pub drops_retry: i64,
    /// The version read (0 on a schema of rows).
    ver: i64,
    /// The tallies as read or last written: [`write`] writes only a change.
    written: [i64; 5],
}

impl State {
    fn tallies(&self) -> [i64; 5] {
        [
            self.depth,
            self.bytes,
            self.drops_bounds,
            self.drops_ttl,
            self.drops_retry,
        ]
    }
}

/// One partition: sequence numbers [tail, head) may be stored; the rows
/// below the tail are read by nothing.
#[derive(Debug, Clone)]
pub struct Part {
    pub name: String,
    pub tail: i64,
    pub head: i64,
    pub depth: i64,
    pub bytes: i64,
    /// The version read (0 on a schema of rows, or in a listing).
    ver: i64,
    /// The bounds as read or last written: [`part_write`] writes only a
    /// change.
    written: [i64; 4],
}

impl Part {
    fn bounds(&self) -> [i64; 4] {
        [self.tail, self.head, self.depth, self.bytes]
    }
}

fn state_of(r: &pgrx::spi::SpiHeapTupleData<'_>) -> State {
    let mut s = State {
        incarnation: spi::col(r, "incarnation"),
        depth: spi::col(r, "depth"),
        bytes: spi::col(r, "bytes"),
        drops_bounds: spi::col(r, "drops_bounds"),
        drops_ttl: spi::col(r, "drops_ttl"),
        drops_retry: spi::col(r, "drops_retry"),
        ver: spi::col(r, "ver"),
        written: [0; 5],
    };
    s.written = s.tallies();
    s
}

/// The live queue's tallies, locked (every write to the queue holds the
/// lock); None when it is not live. On a schema of versions the lock is
/// the queue's state row, written once, and the tallies are read in a
/// statement of their own once it is granted, so they are the newest.
pub fn lock(c: &mut SpiClient<'_>, queue: &str) -> Option<State> {
    let row = run(
        c,
        [
            crate::query!("ephemeral_state_lock"),
            crate::query!("ephemeral_rows/ephemeral_state_lock"),
        ],
        &[spi::TEXT],
        &[queue.into()],
    )
    .next()?;
    if !as_versions() {
        return Some(state_of(&row));
    }
    let inc: i64 = spi::col(&row, "incarnation");
    let tallies = exec_keyed(
        c,
        crate::query!("ephemeral_tallies_get"),
        &[spi::INT8],
        &[inc.into()],
    )
    .next()
    .map(|r| state_of(&r));
    Some(tallies.unwrap_or_else(|| {
        errors::corrupt(format!("ephemeral queue {queue:?} is live without tallies"))
    }))
}

/// The live queue's tallies, locked, made live (a new incarnation) if it
/// was not.
pub fn lock_or_create(c: &mut SpiClient<'_>, queue: &str) -> State {
    if let Some(s) = lock(c, queue) {
        return s;
    }
    run(
        c,
        [
            crate::query!("ephemeral_state_create"),
            crate::query!("ephemeral_rows/ephemeral_state_create"),
        ],
        &[spi::TEXT],
        &[queue.into()],
    );
    lock(c, queue).expect("the queue was just made live")
}

/// The live queue's tallies, unlocked (for the reads).
pub fn get(c: &mut SpiClient<'_>, queue: &str) -> Option<State> {
    run(
        c,
        [
            crate::query!("ephemeral_state_get"),
            crate::query!("ephemeral_rows/ephemeral_state_get"),
        ],
        &[spi::TEXT],
        &[queue.into()],
    )
    .next()
    .map(|r| state_of(&r))
}

/// Writes the tallies, when they changed, as the next version of the one
/// held.
pub fn write(c: &mut SpiClient<'_>, s: &mut State) {
    if s.tallies() == s.written {
        return;
    }
    run(
        c,
        [
            crate::query!("ephemeral_state_write"),
            crate::query!("ephemeral_rows/ephemeral_state_write"),
        ],
        &[
            spi::INT8,
            spi::INT8,
            spi::INT8,
            spi::INT8,
            spi::INT8,
            spi::INT8,
            spi::INT8,
        ],
        &[
            s.incarnation.into(),
            s.depth.into(),
            s.bytes.into(),
            s.drops_bounds.into(),
            s.drops_ttl.into(),
            s.drops_retry.into(),
            s.ver.into(),
        ],
    );
    s.ver += 1;
    s.written = s.tallies();
}

/// Ends the queue's incarnation, holding its tallies locked (so no write
/// to it is under way); answers the messages it held (None: it was not
/// live). Its rows go in later cleanup steps.
pub fn retire(c: &mut SpiClient<'_>, queue: &str) -> Option<i64> {
    lock(c, queue)?;
    run(
        c,
        [
            crate::query!("ephemeral_state_retire"),
            crate::query!("ephemeral_rows/ephemeral_state_retire"),
        ],
        &[spi::TEXT],
        &[queue.into()],
    )
    .next()
    .map(|r| spi::col::<i64>(&r, "depth"))
}

/// One bounded step of removing an ended incarnation's rows
/// (`queen.ephemeral_cleanup_batch` of each kind); whether there was one
/// to clean.
pub fn cleanup_retired_step(c: &mut SpiClient<'_>) -> bool {
    let Some(inc) = exec_keyed(c, crate::query!("ephemeral_retired_next"), &[], &[])
        .next()
        .map(|r| spi::col::<i64>(&r, "incarnation"))
    else {
        return false;
    };
    let removed = run(
        c,
        [
            crate::query!("ephemeral_retired_purge"),
            crate::query!("ephemeral_rows/ephemeral_retired_purge"),
        ],
        &[spi::INT8, spi::INT8],
        &[inc.into(), settings::ephemeral_cleanup_batch().into()],
    )
    .next()
    .map_or(0, |r| spi::col::<i64>(&r, "removed"));
    if removed == 0 {
        exec_keyed(
            c,
            crate::query!("ephemeral_retired_done"),
            &[spi::INT8],
            &[inc.into()],
        );
    }
    true
}

fn part_of(r: &pgrx::spi::SpiHeapTupleData<'_>, name: String, ver: i64) -> Part {
    let mut p = Part {
        name,
        tail: spi::col(r, "tail"),
        head: spi::col(r, "head"),
        depth: spi::col(r, "depth"),
        bytes: spi::col(r, "bytes"),
        ver,
        written: [0; 4],
    };
    p.written = p.bounds();
    p
}

/// A partition's bounds, read under the queue's lock (a schema of rows
/// locks the partition's row too); None when the queue has no such
/// partition.
pub fn part_lock(c: &mut SpiClient<'_>, inc: i64, name: &str) -> Option<Part> {
    run(
        c,
        [
            crate::query!("ephemeral_partition_get"),
            crate::query!("ephemeral_rows/ephemeral_partition_lock"),
        ],
        &[spi::INT8, spi::TEXT],
        &[inc.into(), name.into()],
    )
    .next()
    .map(|r| part_of(&r, name.to_owned(), spi::col(&r, "ver")))
}

/// A partition, locked, made if the queue had none of that name.
pub fn part_lock_or_create(c: &mut SpiClient<'_>, inc: i64, name: &str) -> Part {
    if let Some(p) = part_lock(c, inc, name) {
        return p;
    }
    run(
        c,
        [
            crate::query!("ephemeral_partition_create"),
            crate::query!("ephemeral_rows/ephemeral_partition_create"),
        ],
        &[spi::INT8, spi::TEXT],
        &[inc.into(), name.into()],
    );
    part_lock(c, inc, name).expect("the partition was just made")
}

/// Writes a partition's bounds, when they changed, as the next version of
/// the one held.
pub fn part_write(c: &mut SpiClient<'_>, inc: i64, p: &mut Part) {
    if p.bounds() == p.written {
        return;
    }
    run(
        c,
        [
            crate::query!("ephemeral_partition_write"),
            crate::query!("ephemeral_rows/ephemeral_partition_write"),
        ],
        &[
            spi::INT8,
            spi::TEXT,
            spi::INT8,
            spi::INT8,
            spi::INT8,
            spi::INT8,
            spi::INT8,
        ],
        &[
            inc.into(),
            p.name.as_str().into(),
            p.tail.into(),
            p.head.into(),
            p.depth.into(),
            p.bytes.into(),
            p.ver.into(),
        ],
    );
    p.ver += 1;
    p.written = p.bounds();
}

/// The queue's partitions by name, at most `limit`, unlocked.
pub fn parts(c: &mut SpiClient<'_>, inc: i64, limit: i64) -> Vec<Part> {
    run(
        c,
        [
            crate::query!("ephemeral_partitions_list"),
            crate::query!("ephemeral_rows/ephemeral_partitions_list"),
        ],
        &[spi::INT8, spi::INT8],
        &[inc.into(), limit.into()],
    )
    .map(|r| {
        let name = spi::col::<String>(&r, "partition");
        part_of(&r, name, 0)
    })
    .collect()
}

/// The names of the queue's partitions, at most `limit`, from just past
/// `after` (None: the first) and round to it.
pub fn parts_round(
    c: &mut SpiClient<'_>,
    inc: i64,
    after: Option<&str>,
    limit: i64,
) -> Vec<String> {
    run(
        c,
        [
            crate::query!("ephemeral_partitions_round"),
            crate::query!("ephemeral_rows/ephemeral_partitions_round"),
        ],
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[inc.into(), after.into(), limit.into()],
    )
    .map(|r| spi::col::<String>(&r, "partition"))
    .collect()
}

/// Moves the partition's tail to `upto` (the messages in between are gone
/// for every group), taking what it stored there out of the tallies;
/// answers how many messages and bytes that was. On a schema of versions
/// the rows stay, read by nothing, for the retention cycle's compaction
/// (and the leases below the tail with them); on a schema of rows they are
/// deleted here, with the leases on them.
fn move_tail(c: &mut SpiClient<'_>, s: &mut State, p: &mut Part, upto: i64) -> (i64, i64) {
    let upto = upto.min(p.head);
    if upto <= p.tail {
        return (0, 0);
    }
    let args = [
        s.incarnation.into(),
        p.name.as_str().into(),
        p.tail.into(),
        upto.into(),
    ];
    let types = [spi::INT8, spi::TEXT, spi::INT8, spi::INT8];
    let gone = removed(
        run(
            c,
            [
                crate::query!("ephemeral_messages_span"),
                crate::query!("ephemeral_messages_remove"),
            ],
            &types,
            &args,
        )
        .next(),
    );
    if !leases_as_log() {
        exec_keyed(c, crate::query!("ephemeral_leases_below"), &types, &args);
    }
    p.tail = upto;
    p.depth -= gone.0;
    p.bytes -= gone.1;
    s.depth -= gone.0;
    s.bytes -= gone.1;
    gone
}

fn removed(r: Option<pgrx::spi::SpiHeapTupleData<'_>>) -> (i64, i64) {
    r.map_or((0, 0), |r| (spi::col(&r, "n"), spi::col(&r, "bytes")))
}

/// One bounded step of dropping a partition's messages older than
/// `ttl_seconds` (counted in `drops.ttl`): the tail moves past the oldest
/// ones, at most `queen.ephemeral_cleanup_batch` of them.
pub fn expire_step(c: &mut SpiClient<'_>, s: &mut State, p: &mut Part, ttl_seconds: i64) {
    if ttl_seconds <= 0 || p.tail >= p.head {
        return;
    }
    let most = p
        .tail
        .saturating_add(settings::ephemeral_cleanup_batch())
        .min(p.head);
    let upto = exec_keyed(
        c,
        crate::query!("ephemeral_expired_upto"),
        &[spi::INT8, spi::TEXT, spi::INT8, spi::INT8, spi::INT8],
        &[
            s.incarnation.into(),
            p.name.as_str().into(),
            p.tail.into(),
            most.into(),
            ttl_seconds.into(),
        ],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "seq"))
    .unwrap_or(most);
    let (n, _) = move_tail(c, s, p, upto);
    s.drops_ttl += n;
}

/// One bounded step of removing a partition's messages every group of the
/// queue has passed (none while a group has no cursor in the partition).
pub fn reclaim_step(c: &mut SpiClient<'_>, s: &mut State, p: &mut Part) {
    if p.tail >= p.head {
        return;
    }
    let sql = if leases_as_log() {
        crate::query!("ephemeral_watermark_log")
    } else if as_versions() {
        crate::query!("ephemeral_watermark")
    } else {
        crate::query!("ephemeral_rows/ephemeral_watermark")
    };
    let Some(row) = exec_keyed(
        c,
        sql,
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[s.incarnation.into(), p.name.as_str().into(), p.tail.into()],
    )
    .next() else {
        return;
    };
    let groups: i64 = spi::col(&row, "groups");
    let cursors: i64 = spi::col(&row, "cursors");
    let watermark: Option<i64> = spi::opt(&row, "watermark");
    let Some(watermark) = watermark.filter(|_| groups > 0 && cursors >= groups) else {
        return;
    };
    let upto = watermark.min(p.tail.saturating_add(settings::ephemeral_cleanup_batch()));
    move_tail(c, s, p, upto);
}

/// Drops the oldest messages of `p` until `need_len` messages and
/// `need_bytes` bytes are gone or the partition is empty, in steps of
/// `queen.ephemeral_cleanup_batch` (counted in `drops.bounds`). Answers
/// what is still needed.
pub fn drop_oldest(
    c: &mut SpiClient<'_>,
    s: &mut State,
    p: &mut Part,
    mut need_len: i64,
    mut need_bytes: i64,
) -> (i64, i64) {
    while (need_len > 0 || need_bytes > 0) && p.depth > 0 {
        let upto = exec_keyed(
            c,
            crate::query!("ephemeral_drop_upto"),
            &[
                spi::INT8,
                spi::TEXT,
                spi::INT8,
                spi::INT8,
                spi::INT8,
                spi::INT8,
            ],
            &[
                s.incarnation.into(),
                p.name.as_str().into(),
                settings::ephemeral_cleanup_batch().into(),
                need_len.into(),
                need_bytes.into(),
                p.tail.into(),
            ],
        )
        .next()
        .and_then(|r| spi::opt::<i64>(&r, "upto"));
        let Some(upto) = upto else { break };
        let (n, bytes) = move_tail(c, s, p, upto);
        if n == 0 {
            break;
        }
        s.drops_bounds += n;
        need_len -= n;
        need_bytes -= bytes;
    }
    (need_len, need_bytes)
}
