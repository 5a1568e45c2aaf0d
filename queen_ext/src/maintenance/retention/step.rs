//! The bounded retention steps. One call is one partition, at most
//! `max_rows` rows, and holds exactly one `log_partitions` row lock until
//! its own transaction ends (a retention step holds it in a mode pushes
//! pass, but for its last statements: see [`retention_step`]). The caller
//! loops a step until it answers done.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys;
use pgrx::spi::SpiClient;
use serde::Serialize;

use crate::engine::dlq;
use crate::engine::soft_commit::{self, Soft};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::pg::subxact;
use crate::query;

type Ts = TimestampWithTimeZone;

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct StepResult {
    /// Rows deleted (segments, or sidecar rows for the purge).
    pub deleted: i64,
    /// Messages (frames) those rows held.
    pub messages: i64,
    /// The watermark after the step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_log_start: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_txns_start: Option<i64>,
    pub done: bool,
    /// The step gave way to the pushes in flight and was made again
    /// holding its partition throughout (only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub redone: bool,
}

impl StepResult {
    fn nothing(done: bool) -> StepResult {
        StepResult {
            deleted: 0,
            messages: 0,
            new_log_start: None,
            new_txns_start: None,
            done,
            redone: false,
        }
    }
}

/// The one column of the first row `sql` answers (None: no row, or NULL).
fn one_i64(
    client: &mut SpiClient<'_>,
    sql: &'static str,
    types: &[pgrx::pg_sys::PgOid],
    args: &[pgrx::datum::DatumWithOid<'_>],
) -> Option<i64> {
    exec(client, sql, types, args)
        .next()
        .and_then(|r| r.get::<i64>(1).unwrap())
}

/// The base offset of the (max_rows + 1)-th segment from `from`: one bounded
/// primary-key probe. None when the rest of the log fits one batch.
fn segment_horizon(client: &mut SpiClient<'_>, pid: i64, from: i64, max_rows: i32) -> Option<i64> {
    one_i64(
        client,
        query!("retention_step_segment_horizon"),
        &[spi::INT8, spi::INT8, spi::INT8],
        &[pid.into(), from.into(), (max_rows as i64).into()],
    )
}

/// Where a time rule puts the boundary: the first segment fresh enough to
/// keep, or when nothing inside the window is fresh, the horizon (the next
/// call's question) or the end of the log.
fn time_boundary(
    client: &mut SpiClient<'_>,
    pid: i64,
    from: i64,
    cutoff: Ts,
    horizon: Option<i64>,
) -> i64 {
    let fresh = one_i64(
        client,
        query!("retention_step_fresh_segment"),
        &[spi::INT8, spi::INT8, spi::TIMESTAMPTZ, spi::INT8],
        &[pid.into(), from.into(), cutoff.into(), horizon.into()],
    );
    if let Some(b) = fresh.or(horizon) {
        return b;
    }
    let last_end = one_i64(
        client,
        query!("retention_step_last_end"),
        &[spi::INT8],
        &[pid.into()],
    );
    last_end.map_or(from, |e| e + 1).max(from)
}

/// A step's carry-forward must see every dead letter committed before its
/// lock on the doomed segments, which only READ COMMITTED's statement
/// snapshots do; at a stricter level one committed after the transaction's
/// snapshot would be left pointing at a deleted segment.
fn require_read_committed() {
    if unsafe { pg_sys::XactIsoLevel } != pg_sys::XACT_READ_COMMITTED as i32 {
        errors::wrong_isolation("a retention step runs at READ COMMITTED only");
    }
}

/// How a step holds its partition.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// KEY SHARE from the start (pushes carry on beside the step), then NO
    /// KEY UPDATE for the watermark move only, waited for at most
    /// [`advance_wait_ms`]: a push waits for the move and the commit, not
    /// for the whole delete.
    Short,
    /// FOR UPDATE from the start, before any leaf (the lock order): the
    /// step's way when the short hold timed out.
    Whole,
}

/// Retention rules 1 (time, regardless of consumption) and 2 (time, consumed
/// only: capped at the slowest group's next wanted offset) over one batch of
/// one partition. A NULL cutoff disables its rule. Deletes whole segments
/// only, moves `log_start` (never backwards) and `oldest_live_at` in the same
/// row update, widens the dead letters that point into what it deletes, and
/// writes one `retention_history` row in the same transaction.
///
/// The step is first made holding its partition only briefly, in a
/// subtransaction; when the watermark move cannot have the partition in
/// time, everything that try did is undone (its row locks with it) and the
/// step is made again holding the partition first. A transaction that
/// holds the partition and then wants a leaf the step locked (a push and
/// then a dead-letter write of the same partition, in one transaction)
/// therefore never deadlocks with the step: the step gives way well inside
/// `deadlock_timeout`.
///
/// A transaction whose only write is the step commits without waiting for
/// the WAL flush (`soft_commit`, `queen.retention_async_commit`).
pub fn retention_step(
    client: &mut SpiClient<'_>,
    pid: i64,
    all_cutoff: Option<Ts>,
    completed_cutoff: Option<Ts>,
    max_rows: i32,
    history_type: Option<&str>,
) -> StepResult {
    let args = StepArgs {
        pid,
        all_cutoff,
        completed_cutoff,
        max_rows,
        history_type,
    };
    soft_commit::first_write(Soft::Retention, || step(client, &args))
}

fn step(client: &mut SpiClient<'_>, args: &StepArgs<'_>) -> StepResult {
    require_read_committed();
    // Two steps on one partition take turns: the short hold does not keep
    // a second step out, and that one would find the first one's batch
    // held (SKIP LOCKED) and answer nothing to delete.
    exec(
        client,
        query!("retention_step_lock_steps"),
        &[spi::INT4, spi::INT4],
        &[STEP_LOCK.into(), spi::advisory_id(args.pid).into()],
    );
    let started = std::time::Instant::now();
    match subxact::in_subtransaction(|| spi::spi(|c| step_holding(c, args, Hold::Short, started))) {
        Ok(r) => r,
        Err(e) if e.sqlstate == LOCK_NOT_AVAILABLE => StepResult {
            redone: true,
            ..step_holding(client, args, Hold::Whole, started)
        },
        Err(e) => e.raise("queen"),
    }
}

/// The first half of the two-int4 advisory key two steps on one partition
/// take turns on (the second half is the partition's id, folded).
const STEP_LOCK: i32 = 0x5155_0003;

/// `lock_not_available`: what a lock wait that ran past lock_timeout raises.
pub const LOCK_NOT_AVAILABLE: &str = "55P03";

struct StepArgs<'a> {
    pid: i64,
    all_cutoff: Option<Ts>,
    completed_cutoff: Option<Ts>,
    max_rows: i32,
    history_type: Option<&'a str>,
}

/// How long the watermark move of a short hold waits for its partition, in
/// milliseconds: `queen.retention_advance_wait_ms`, but never past half of
/// `deadlock_timeout` from the step's start, so that a transaction the
/// step waits for and that waits for the step (a deadlock) finds the step
/// gone when its own deadlock check runs. At least 1 (0 would be no limit).
fn advance_wait_ms(started: std::time::Instant) -> i64 {
    let deadlock_ms = unsafe { pg_sys::DeadlockTimeout } as i64;
    let spent = started.elapsed().as_millis() as i64;
    settings::retention_advance_wait_ms()
        .min(deadlock_ms / 2 - spent)
        .max(1)
}

fn step_holding(
    client: &mut SpiClient<'_>,
    a: &StepArgs<'_>,
    hold: Hold,
    started: std::time::Instant,
) -> StepResult {
    let pid = a.pid;
    let lock = match hold {
        Hold::Short => query!("retention_step_lock_shared"),
        Hold::Whole => query!("retention_step_lock_exclusive"),
    };
    let Some(log_start) = one_i64(client, lock, &[spi::INT8], &[pid.into()]) else {
        // Deleted underneath (a queue drop): nothing left to do.
        return StepResult::nothing(true);
    };
    if a.all_cutoff.is_none() && a.completed_cutoff.is_none() {
        return StepResult::nothing(true);
    }
    let horizon = segment_horizon(client, pid, log_start, a.max_rows);
    let (rule1, rule2) = rule_boundaries(
        client,
        pid,
        log_start,
        horizon,
        a.all_cutoff,
        a.completed_cutoff,
    );
    let boundary = log_start
        .max(rule1.unwrap_or(log_start))
        .max(rule2.unwrap_or(log_start));
    if boundary <= log_start {
        return StepResult {
            new_log_start: Some(log_start),
            ..StepResult::nothing(true)
        };
    }
    let run = lock_doomed(client, pid, log_start, boundary, a.max_rows);
    if run.rows == 0 {
        return StepResult {
            new_log_start: Some(log_start),
            ..StepResult::nothing(true)
        };
    }
    let moved_by = match a.history_type {
        Some(t) => t,
        None if rule1.unwrap_or(i64::MIN) >= rule2.unwrap_or(i64::MIN) => "retention",
        None => "completed_retention",
    };
    let advance = match hold {
        Hold::Short => Some(started),
        Hold::Whole => None,
    };
    let new_start = reclaim(client, pid, log_start, &run, moved_by, advance);
    // More may be deletable when the batch was full or the boundary stopped
    // at the horizon; a run cut short by a held segment waits for the next
    // cycle.
    let held = (run.rows as usize) < run.locked;
    let clipped =
        !held && (run.rows == a.max_rows as i64 || horizon.is_some_and(|h| boundary >= h));
    StepResult {
        deleted: run.rows,
        messages: run.frames,
        new_log_start: Some(new_start),
        new_txns_start: None,
        done: !clipped,
        redone: false,
    }
}

/// Takes the partition for the watermark move (a short hold): waits for
/// the pushes in flight at most [`advance_wait_ms`], then raises
/// `lock_not_available`. lock_timeout is put back as it was.
fn lock_for_advance(client: &mut SpiClient<'_>, pid: i64, started: std::time::Instant) {
    let wait = format!("{}ms", advance_wait_ms(started));
    with_lock_timeout(client, &wait, |c| {
        exec(
            c,
            query!("retention_step_lock_advance"),
            &[spi::INT8],
            &[pid.into()],
        );
    });
}

/// Runs `f` with lock_timeout `wait` (a lock waited for longer raises
/// `lock_not_available`), then puts lock_timeout back as it was.
pub fn with_lock_timeout<R>(
    client: &mut SpiClient<'_>,
    wait: &str,
    f: impl FnOnce(&mut SpiClient<'_>) -> R,
) -> R {
    let before: String = exec(
        client,
        query!("retention_step_lock_timeout"),
        &[spi::TEXT],
        &[wait.into()],
    )
    .next()
    .map(|r| spi::col(&r, "before"))
    .expect("one row");
    let r = f(client);
    exec(
        client,
        query!("retention_step_lock_timeout"),
        &[spi::TEXT],
        &[before.as_str().into()],
    );
    r
}

/// Deletes the run (its dead letters made self-contained first), moves the
/// partition's watermark past it and records the delete; answers the new
/// log start. With `advance` (a short hold, started then), the partition is
/// taken for the move only, after the deletes: the move's statement then
/// sees every push that committed before it, and so sets `oldest_live_at`
/// right even when the step deleted every segment it saw.
fn reclaim(
    client: &mut SpiClient<'_>,
    pid: i64,
    log_start: i64,
    run: &Run,
    moved_by: &str,
    advance: Option<std::time::Instant>,
) -> i64 {
    // Dead letters pointing into the doomed segments become self-contained
    // first, in this same transaction. At READ COMMITTED this statement sees
    // every dead letter committed into them: none can be written any more.
    dlq::carry_forward(client, pid, log_start, run.max_end);
    exec(
        client,
        query!("retention_step_delete_segments"),
        &[spi::INT8, spi::INT8, spi::INT8],
        &[pid.into(), log_start.into(), run.max_base.into()],
    );
    // Tombstones go with the segments they point into.
    crate::engine::deleted::drop_through(client, pid, run.max_end);
    let new_start = run.max_end + 1;
    if let Some(started) = advance {
        lock_for_advance(client, pid, started);
    }
    exec(
        client,
        query!("retention_step_advance_start"),
        &[spi::INT8, spi::INT8, spi::TIMESTAMPTZ],
        &[pid.into(), new_start.into(), run.last_created.into()],
    );
    exec(
        client,
        query!("retention_step_history"),
        &[spi::INT8, spi::TEXT, spi::INT8, spi::INT8],
        &[
            pid.into(),
            moved_by.into(),
            run.frames.into(),
            run.rows.into(),
        ],
    );
    new_start
}

/// Where rules 1 and 2 put the boundary, looking no further than `horizon`:
/// rule 1 at the first segment fresher than its cutoff, rule 2 the same but
/// never past the slowest consumer group, counting a group registered on
/// the queue that has not read the partition yet (no group has read it:
/// nothing consumed, and rule 2 contributes nothing).
fn rule_boundaries(
    client: &mut SpiClient<'_>,
    pid: i64,
    log_start: i64,
    horizon: Option<i64>,
    all_cutoff: Option<Ts>,
    completed_cutoff: Option<Ts>,
) -> (Option<i64>, Option<i64>) {
    let rule1 = all_cutoff.map(|c| time_boundary(client, pid, log_start, c, horizon));
    let rule2 = completed_cutoff.and_then(|c| {
        // No consumer rows: nothing is consumed, rule 2 contributes nothing.
        let (_, cap) = slowest_group(client, pid)?;
        Some(time_boundary(client, pid, log_start, c, horizon).min(cap))
    });
    (rule1, rule2)
}

/// The run of whole segments a step deletes, from the watermark on.
struct Run {
    /// The segments locked (the run stops below the first held one).
    locked: usize,
    rows: i64,
    frames: i64,
    max_base: i64,
    max_end: i64,
    /// created_at of the run's last segment: when the run empties the
    /// partition, the partition row keeps it as its last write.
    last_created: Option<Ts>,
}

/// Whole segments only: a segment the boundary cuts keeps its tail. The
/// doomed segments are locked first, skipping any that a dead-letter
/// write holds (it takes its segment FOR SHARE until it commits): the
/// step never waits on one while it holds the partition, and deletes only
/// the run of segments from the watermark up to the first held one. A
/// dead-letter write that comes after this lock waits for the step, then
/// finds its segment gone. The lock costs little beside the delete
/// (2026-12-01, 2000 segments of 100 ~256 B messages each: 3.6-4.4 ms of
/// locking against 77-129 ms of delete, WAL +0.1-0.4%; with tiny inline
/// blobs it doubles the heap work, +27% WAL, and `make bench
/// WHAT=retention`'s small segments drained at 190-195k/s against 306k/s
/// without it, push p99 during the drain 6.1-7.1x quiet against 5.6x).
///
/// Answers the run below the first held segment.
fn lock_doomed(
    client: &mut SpiClient<'_>,
    pid: i64,
    log_start: i64,
    boundary: i64,
    max_rows: i32,
) -> Run {
    let locked: Vec<(i64, i64, i32, Ts)> = exec(
        client,
        query!("retention_step_lock_doomed"),
        &[spi::INT8, spi::INT8, spi::INT8, spi::INT8],
        &[
            pid.into(),
            log_start.into(),
            boundary.into(),
            (max_rows as i64).into(),
        ],
    )
    .map(|r| {
        (
            spi::col(&r, "base_offset"),
            spi::col(&r, "end_offset"),
            spi::col(&r, "frame_count"),
            spi::col(&r, "created_at"),
        )
    })
    .collect();
    let (mut rows, mut frames, mut max_base, mut max_end) = (0i64, 0i64, log_start, log_start - 1);
    let mut last_created = None;
    for (base, end, count, created) in &locked {
        if *base != max_end + 1 {
            break;
        }
        (rows, frames, max_base, max_end) = (rows + 1, frames + *count as i64, *base, *end);
        last_created = Some(*created);
    }
    Run {
        locked: locked.len(),
        rows,
        frames,
        max_base,
        max_end,
        last_created,
    }
}

/// The sidecar purge: rows older than `cutoff`, from `txns_start`, one batch.
/// Moves `txns_start` and `oldest_txn_at` in the same row update. Its
/// commit is relaxed as a retention step's is.
pub fn txns_purge_step(
    client: &mut SpiClient<'_>,
    pid: i64,
    cutoff: Ts,
    max_rows: i32,
) -> StepResult {
    soft_commit::first_write(Soft::Retention, || {
        txns_purge(client, pid, cutoff, max_rows)
    })
}

fn txns_purge(client: &mut SpiClient<'_>, pid: i64, cutoff: Ts, max_rows: i32) -> StepResult {
    let Some(txns_start) = one_i64(
        client,
        query!("retention_txns_purge_lock"),
        &[spi::INT8],
        &[pid.into()],
    ) else {
        return StepResult::nothing(true);
    };
    let batch = exec(
        client,
        query!("retention_txns_purge_span"),
        &[spi::INT8, spi::INT8, spi::TIMESTAMPTZ, spi::INT8],
        &[
            pid.into(),
            txns_start.into(),
            cutoff.into(),
            (max_rows as i64).into(),
        ],
    )
    .next()
    .expect("an aggregate answers one row");
    let rows: i64 = spi::col(&batch, "rows");
    if rows == 0 {
        return StepResult {
            new_txns_start: Some(txns_start),
            ..StepResult::nothing(true)
        };
    }
    let messages: i64 = spi::col(&batch, "messages");
    let max_base: i64 = spi::col(&batch, "max_base");
    let new_start: i64 = spi::col(&batch, "new_start");
    exec(
        client,
        query!("retention_txns_purge_delete"),
        &[spi::INT8, spi::INT8, spi::INT8],
        &[pid.into(), txns_start.into(), max_base.into()],
    );
    exec(
        client,
        query!("retention_txns_purge_advance"),
        &[spi::INT8, spi::INT8],
        &[pid.into(), new_start.into()],
    );
    StepResult {
        deleted: rows,
        messages,
        new_log_start: None,
        new_txns_start: Some(new_start),
        done: rows < max_rows as i64,
        redone: false,
    }
}

/// The consumer group furthest behind on `pid`, with the next offset it
/// would read, a group registered on the queue that has not read `pid` yet
/// included (None: no group has read it).
pub fn slowest_group(client: &mut SpiClient<'_>, pid: i64) -> Option<(String, i64)> {
    exec(
        client,
        query!("retention_slowest_group"),
        &[spi::INT8],
        &[pid.into()],
    )
    .next()
    .map(|r| {
        (
            spi::col::<String>(&r, "consumer_group"),
            spi::col::<i64>(&r, "next_offset"),
        )
    })
}
