//! Bounds both extensions keep alike: a shard's answer and the proxy's
//! merge of every shard's answers are bounded the same.

/// The most rows one page of a queue list answers, whatever `limit` asks.
pub const LIST_PAGE_MAX: i64 = 1000;
