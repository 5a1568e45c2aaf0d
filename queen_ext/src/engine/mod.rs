//! The log itself: push (resolve, dedup, append), pop (candidates, cursor,
//! read), ack (resolve, settle), the segments, dead letters, transactions and
//! the soft commit, and the counters the metrics series is made of.

pub mod ack;
pub mod counters;
pub mod dlq;
pub mod groups;
pub mod pop;
pub mod push;
pub mod segments;
pub mod soft_commit;
pub mod transaction;
