//! A backend's maps keyed by (queue name, consumer group) that hold only
//! where its next scan starts (the pops' positions and hints): each keeps
//! [`KEPT`] pairs at most, and past it all are dropped, so a backend that
//! serves many queues holds a bounded amount.

use std::collections::HashMap;

/// The most (queue, group) pairs one map keeps.
pub const KEPT: usize = 4096;

/// Keeps `value` for (`queue`, `group`) in `map`; past [`KEPT`] pairs, all
/// are dropped first.
pub fn keep<V>(map: &mut HashMap<(String, String), V>, queue: &str, group: &str, value: V) {
    let key = (queue.to_owned(), group.to_owned());
    if map.len() >= KEPT && !map.contains_key(&key) {
        map.clear();
    }
    map.insert(key, value);
}
