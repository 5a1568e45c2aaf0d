//! A backend's memo of the partitions a consumer group has done, per
//! (queue, group): a pop's candidate scan passes them by without probing
//! their cursor and newest segment, so a queue of many partitions of which
//! few hold messages costs the partitions that do. A partition found done
//! at end `e` is passed by while its shared bound is still `e` (nothing was
//! pushed to it since) and the shared epoch has not moved (no cursor moved
//! back): `catalog::ends` says why that is enough.
//!
//! The memo is made by a survey of the queue (`pop_survey.sql`), run at the
//! end of a pop whose windows found the queue sparse (no candidate beyond
//! the hints), or before the read of the whole queue when its window found
//! none (that read then passes by what the survey found done), at most
//! once per `queen.pop_memo_ms`, and is used for that long. Only a READ
//! COMMITTED transaction surveys (an older snapshot could
//! predate a seek whose epoch it reads), only at its top level (no callback
//! hears of a subtransaction's rollback), and a memo made in a transaction
//! that is rolled back is dropped with it (the survey saw that
//! transaction's own writes). Every backend keeps `queen.pop_memo_partitions`
//! partitions at most.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use pgrx::callbacks::PgXactCallbackEvent;
use pgrx::pg_sys;

use pgrx::spi::SpiClient;

use crate::catalog::ends;
use crate::pg::settings;
use crate::pg::spi;
use crate::pg::time;
use crate::query;

struct Memo {
    epoch: u64,
    made_us: i64,
    /// Name → (partition id, the end it was found done at).
    done: BTreeMap<String, (i64, i64)>,
}

thread_local! {
    static MEMOS: RefCell<HashMap<(String, String), Memo>> = RefCell::new(HashMap::new());
    /// The (queue, group) pairs surveyed in this transaction.
    static MADE_NOW: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

fn key(queue: &str, group: &str) -> (String, String) {
    (queue.to_owned(), group.to_owned())
}

/// Whether a memo made at `epoch` and `made_us` may be used now.
fn fresh(epoch: u64, made_us: i64) -> bool {
    let ttl = settings::pop_memo_ms();
    ttl > 0
        && !ends::moving_back()
        && ends::epoch() == Some(epoch)
        && time::wall_clock_us() - made_us < ttl.saturating_mul(1000)
}

/// The partitions of `queue` a pop for `group` passes by: the memo's
/// entries from just past `after` (`window` of them), and from the first
/// name up to `after` (as many), whose bound is still the end they were
/// found done at. Entries whose bound moved are dropped.
pub fn skips(queue: &str, group: &str, after: &str, window: usize) -> Vec<i64> {
    MEMOS.with_borrow_mut(|memos| {
        let k = key(queue, group);
        let Some(m) = memos.get_mut(&k) else {
            return Vec::new();
        };
        if !fresh(m.epoch, m.made_us) {
            memos.remove(&k);
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut moved = Vec::new();
        let past = m
            .done
            .range::<str, _>((Bound::Excluded(after), Bound::Unbounded))
            .take(window);
        let from_first = m
            .done
            .range::<str, _>((Bound::Unbounded, Bound::Included(after)))
            .take(window);
        for (name, &(pid, end)) in past.chain(from_first) {
            if ends::bound(pid) == Some(end) {
                out.push(pid);
            } else {
                moved.push(name.clone());
            }
        }
        for name in moved {
            m.done.remove(&name);
        }
        out
    })
}

/// Every partition of `queue` the memo for `group` passes by (for the read
/// of the whole queue).
pub fn skips_all(queue: &str, group: &str) -> Vec<i64> {
    skips(queue, group, "", usize::MAX)
}

/// Whether a pop for `group` that found `queue` sparse should survey it:
/// its memo is missing or too old, and the transaction reads with a fresh
/// snapshot per statement.
fn wants_survey(queue: &str, group: &str) -> bool {
    if settings::pop_memo_ms() <= 0 || settings::pop_memo_partitions() == 0 {
        return false;
    }
    // A subtransaction's rollback would take back what its survey saw, and
    // no transaction callback hears of it: only the top level surveys.
    let snapshot_per_statement =
        unsafe { pg_sys::XactIsoLevel } < pg_sys::XACT_REPEATABLE_READ as i32;
    let top_level = unsafe { pg_sys::GetCurrentTransactionNestLevel() } == 1;
    if ends::epoch().is_none() || !snapshot_per_statement || !top_level {
        return false;
    }
    MEMOS.with_borrow(|memos| {
        memos
            .get(&key(queue, group))
            .is_none_or(|m| !fresh(m.epoch, m.made_us))
    })
}

/// Keeps what a survey of `queue` for `group` found done (`rows`: name,
/// partition id, end), made at `epoch` (read before the survey's
/// statement). Past `queen.pop_memo_partitions`, the other memos go first.
pub fn keep(queue: &str, group: &str, epoch: u64, rows: Vec<(String, i64, i64)>) {
    let max = settings::pop_memo_partitions();
    let mut done = BTreeMap::new();
    for (name, pid, end) in rows.into_iter().take(max) {
        ends::learn(pid, end);
        done.insert(name, (pid, end));
    }
    let k = key(queue, group);
    MEMOS.with_borrow_mut(|memos| {
        memos.remove(&k);
        let mut kept: usize = memos.values().map(|m| m.done.len()).sum();
        while kept + done.len() > max {
            let Some(oldest) = memos
                .iter()
                .min_by_key(|(_, m)| m.made_us)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            kept -= memos.remove(&oldest).map_or(0, |m| m.done.len());
        }
        memos.insert(
            k.clone(),
            Memo {
                epoch,
                made_us: time::wall_clock_us(),
                done,
            },
        );
    });
    MADE_NOW.with_borrow_mut(|m| m.push(k));
    if !HOOKED.with(|h| h.replace(true)) {
        pgrx::register_xact_callback(PgXactCallbackEvent::Commit, || {
            MADE_NOW.with_borrow_mut(|m| m.clear());
            HOOKED.with(|h| h.set(false));
        });
        pgrx::register_xact_callback(PgXactCallbackEvent::Abort, || {
            let made = MADE_NOW.with_borrow_mut(std::mem::take);
            MEMOS.with_borrow_mut(|memos| {
                for k in made {
                    memos.remove(&k);
                }
            });
            HOOKED.with(|h| h.set(false));
        });
    }
}

/// Surveys the queue `queue_id` (named `queue`) for `group` when its memo
/// is due ([`wants_survey`]): which of its partitions the group has done,
/// kept as the memo. The epoch is read before the survey's statement takes
/// its snapshot.
pub fn survey_if_due(client: &mut SpiClient<'_>, queue_id: i64, queue: &str, group: &str) {
    if !wants_survey(queue, group) {
        return;
    }
    let Some(epoch) = ends::epoch() else { return };
    let rows: Vec<(String, i64, i64)> = spi::exec_probing(
        client,
        query!("pop_survey"),
        &[spi::INT8, spi::TEXT, spi::INT8],
        &[
            queue_id.into(),
            group.into(),
            (settings::pop_memo_partitions() as i64).into(),
        ],
    )
    .map(|r| {
        (
            spi::col::<String>(&r, "name"),
            spi::col::<i64>(&r, "id"),
            spi::col::<i64>(&r, "end_offset"),
        )
    })
    .collect();
    keep(queue, group, epoch, rows);
}
