//! The partitions a backend's pushes found before: (queue name, partition
//! name) to partition id, so that a push over many partitions locks them by
//! id instead of resolving every name first (`push_lock_known.sql`; about
//! 40 us against 110 us for 16 partitions). A remembered id is only a
//! guess: the locking statement answers each row's names as they are now,
//! and a push takes the guess only when every one of its groups finds its
//! own names there. A partition that was deleted (its queue deleted, or the
//! empty-partition cleanup) is no row, a queue made again under the same
//! name has other ids, and neither names nor queues of a partition ever
//! change: any of these sends the push the long way, which remembers what
//! it finds. At most `queen.push_known_partitions` entries; a backend that
//! reaches it forgets them all and starts again.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::pg::settings;
use crate::wire::push::GroupIn;

/// Partition ids by queue name, then partition name.
#[derive(Default)]
struct Known {
    by_queue: HashMap<String, HashMap<String, i64>>,
    entries: usize,
}

thread_local! {
    static KNOWN: RefCell<Known> = RefCell::new(Known::default());
}

/// The remembered id of every group's partition; None when one is unknown
/// (or remembering is off).
pub fn recall(groups: &[GroupIn]) -> Option<Vec<i64>> {
    if settings::push_known_partitions() == 0 {
        return None;
    }
    KNOWN.with(|k| {
        let k = k.borrow();
        groups
            .iter()
            .map(|g| {
                k.by_queue
                    .get(g.queue.as_str())
                    .and_then(|q| q.get(g.partition.as_str()))
                    .copied()
            })
            .collect()
    })
}

/// Remembers each group's partition id (`pids[k]` for `groups[k]`).
pub fn remember(groups: &[GroupIn], pids: impl IntoIterator<Item = i64>) {
    let cap = settings::push_known_partitions();
    if cap == 0 {
        return;
    }
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        for (g, pid) in groups.iter().zip(pids) {
            if k.entries >= cap {
                *k = Known::default();
            }
            let q = k.by_queue.entry(g.queue.clone()).or_default();
            if q.insert(g.partition.clone(), pid).is_none() {
                k.entries += 1;
            }
        }
    });
}

/// Forgets the groups' partitions (a guess that did not hold).
pub fn forget(groups: &[GroupIn]) {
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        for g in groups {
            let Some(q) = k.by_queue.get_mut(g.queue.as_str()) else {
                continue;
            };
            let gone = q.remove(g.partition.as_str()).is_some();
            let empty = q.is_empty();
            if empty {
                k.by_queue.remove(g.queue.as_str());
            }
            if gone {
                k.entries -= 1;
            }
        }
    });
}

/// How many partitions this backend remembers.
pub fn len() -> usize {
    KNOWN.with(|k| k.borrow().entries)
}
