//! The catalogue: queue identity, queue options, and creating, editing and
//! deleting queues.

pub mod admin;
pub mod options;
pub mod queues;
pub mod readers;

/// The consumer group of queue-mode pops and acks (no group named): its
/// cursors are the queue's own.
pub const QUEUE_MODE: &str = "__QUEUE_MODE__";

/// The partition a message goes to when its push names none.
pub const DEFAULT_PARTITION: &str = "Default";

/// The shard count of the timers and the KV rows: the schema's generated
/// `shard` columns (`& 63`) and the sweepers' per-shard scans use the same
/// number (a test checks they agree).
pub const SHARDS: i32 = 64;
