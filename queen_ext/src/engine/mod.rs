//! The log itself: push (resolve, dedup, append), pop (candidates, cursor,
//! read), ack (resolve, settle), the segments, dead letters, transactions and
//! the soft commit; a backend's memo of the partitions a group has done;
//! fused calls (many requests in one transaction); the
//! delete of a message by its address and the messages an operator deleted;
//! the traces consumers record; the counters the metrics series is made of.

pub mod ack;
pub mod counters;
pub mod deleted;
pub mod dlq;
pub mod erase;
pub mod fetch;
pub mod fused;
pub mod groups;
pub mod known_partitions;
pub mod memo;
pub mod pop;
pub mod push;
pub mod segments;
pub mod soft_commit;
pub mod traces;
pub mod transaction;
