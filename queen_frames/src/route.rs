//! Where a queue lives when queen is sharded over several databases behind
//! a proxy (docs/scale.md): the routing hash, shared by the proxy and by
//! anything that wants to know a queue's shard without asking it.
//!
//! A queue name (or a KV namespace) hashes to one of [`SLOTS`] slots; the
//! proxy's slot map says which shard owns each slot. The hash reads only
//! the name's shard key: the text between the first `{` and the next `}`
//! when it is not empty (`orders{acme}` and `invoices{acme}` hash alike),
//! else the whole name. A partition or dead-letter id carries its shard in
//! its bits above [`SHARD_ID_BITS`].

use xxhash_rust::xxh3::xxh3_64;

/// The slots of the routing hash: more than there will ever be shards, so
/// that a shard added later can be given a share of them.
pub const SLOTS: i32 = 1024;
/// The low bits of a partition or dead-letter id that are the shard's own
/// (the shard's `queen.shard_set`, api/shard.rs in the queen extension).
pub const SHARD_ID_BITS: u32 = 40;

/// The part of a name that is hashed: the text inside its first `{...}`
/// when that is not empty, else the whole name.
pub fn shard_key(name: &str) -> &str {
    if let Some(open) = name.find('{') {
        let rest = &name[open + 1..];
        if let Some(close) = rest.find('}') {
            if close > 0 {
                return &rest[..close];
            }
        }
    }
    name
}

/// The slot of a queue or namespace name.
pub fn slot_of(name: &str) -> i32 {
    (xxh3_64(shard_key(name).as_bytes()) % SLOTS as u64) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_key_is_the_first_nonempty_braces() {
        assert_eq!(shard_key("orders{acme}"), "acme");
        assert_eq!(shard_key("{acme}.invoices"), "acme");
        assert_eq!(shard_key("a{}b{c}"), "a{}b{c}");
        assert_eq!(shard_key("plain"), "plain");
        assert_eq!(shard_key("open{only"), "open{only");
        assert_eq!(slot_of("orders{acme}"), slot_of("invoices{acme}"));
        assert_eq!(slot_of("acme"), slot_of("x{acme}"));
    }

    #[test]
    fn slots_spread_names() {
        let mut seen = vec![0u32; SLOTS as usize];
        for i in 0..100_000 {
            seen[slot_of(&format!("queue-{i}")) as usize] += 1;
        }
        let (min, max) = (seen.iter().min().unwrap(), seen.iter().max().unwrap());
        assert!(*min > 40 && *max < 160, "{min}..{max}");
    }
}
