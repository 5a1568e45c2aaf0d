//! What crosses the SQL boundary: JSON in (typed access with errors naming
//! the field) and out (fast writers beside their serde twins), and the datum
//! types the functions take and answer.

pub mod ack;
pub mod binary;
pub mod datum;
pub mod json;
pub mod payload;
pub mod pop;
pub mod push;
pub mod segment;
pub mod shape;
pub mod splice;

/// The consumer group of queue-mode pops and acks (no group named): its
/// cursors are the queue's own.
pub const QUEUE_MODE: &str = "__QUEUE_MODE__";

/// The partition a message goes to when its push names none.
pub const DEFAULT_PARTITION: &str = "Default";
