//! Ephemeral queues: messages, cursors and leases in UNLOGGED tables, so a
//! write costs no WAL and the contents are lost on a crash (PostgreSQL
//! empties unlogged tables in crash recovery). The declared configuration
//! (`queen.ephemeral_queues`) is logged and survives.
//!
//! A live queue has an incarnation, drawn from a logged sequence when the
//! queue's row is made (first push or pop, after a reset, after a crash).
//! Every row of its contents is keyed by it and every id it delivers
//! carries it (`e:<incarnation hex>:<partition>:<seq>`), so an id of an
//! incarnation that is gone is answered `stale`, never taken for a new
//! message. A reset or a delete ends the incarnation at once; its rows are
//! then removed in bounded steps by the push, pop and ack path
//! (`queen.ephemeral_cleanup_batch`), as are the messages every group has
//! passed and those dropped by the bounds or the ttl.
//!
//! The retention cycle forgets the groups no pop has named for a while and
//! removes the empty implicit queues no call has named (`expiry`).
//!
//! Every write to a queue holds its state row's lock, so the counters
//! (depth, bytes, drops) are exact.

pub mod compact;
pub mod expiry;
pub mod leases;
pub mod ops;
pub mod options;
pub mod queue;

use crate::pg::errors;

/// The group of a pop or an ack that names none (queue mode).
pub const QUEUE_MODE: &str = "__QUEUE_MODE__";

/// The partition of a push that names none.
pub const DEFAULT_PARTITION: &str = "Default";

/// The longest queue, partition or group name, in bytes.
pub const MAX_NAME_BYTES: usize = 512;

/// A queue, partition or group name: 1 to [`MAX_NAME_BYTES`] bytes, no
/// control characters.
pub fn check_name<'s>(field: &str, s: &'s str) -> &'s str {
    if s.is_empty() {
        errors::invalid(field, "must not be empty");
    }
    if s.len() > MAX_NAME_BYTES {
        errors::too_long(field, s.len(), MAX_NAME_BYTES);
    }
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        errors::invalid(field, "must not hold control characters");
    }
    s
}

/// The id of a delivered message.
pub fn mint_id(incarnation: i64, partition: &str, seq: i64) -> String {
    format!("e:{incarnation:x}:{partition}:{seq}")
}

/// An id's (incarnation, partition, seq); None for anything else. The
/// partition may hold `:`, so it is what lies between the second field and
/// the last.
pub fn parse_id(id: &str) -> Option<(i64, &str, i64)> {
    let rest = id.strip_prefix("e:")?;
    let (inc, rest) = rest.split_once(':')?;
    let (partition, seq) = rest.rsplit_once(':')?;
    if partition.is_empty() || inc.is_empty() || seq.is_empty() {
        return None;
    }
    if partition.len() > MAX_NAME_BYTES || partition.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return None;
    }
    let inc = i64::from_str_radix(inc, 16).ok()?;
    let seq = seq.parse::<i64>().ok()?;
    Some((inc, partition, seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_with_colons_in_the_partition() {
        let id = mint_id(0x2a, "orders:eu", 7);
        assert_eq!(id, "e:2a:orders:eu:7");
        assert_eq!(parse_id(&id), Some((0x2a, "orders:eu", 7)));
    }

    #[test]
    fn foreign_ids_do_not_parse() {
        for bad in [
            "", "e:1:2", "e:zz:p:1", "e:1:p:x", "e:1::1", "abc", "e::p:1",
        ] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
    }
}
