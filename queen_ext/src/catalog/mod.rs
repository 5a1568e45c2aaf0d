//! The catalogue: queue identity, queue options, the cursors' states, and
//! creating, editing and deleting queues.

pub mod admin;
pub mod cursors;
pub mod ends;
pub mod options;
pub mod queues;
pub mod replaced;
pub mod shard;
pub mod switches;

/// The shard count of the timers and the KV rows: the schema's generated
/// `shard` columns (`& 63`) and the sweepers' per-shard scans use the same
/// number (a test checks they agree).
pub const SHARDS: i32 = 64;
