//! The log itself: push (resolve, dedup, append), pop (candidates, cursor,
//! read), ack (resolve, settle), the segments, dead letters, transactions and
//! the soft commit.

pub mod ack;
pub mod dlq;
pub mod groups;
pub mod pop;
pub mod push;
pub mod reads;
pub mod segments;
pub mod soft_commit;
pub mod transaction;
