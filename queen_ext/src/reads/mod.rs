//! The readers a request asks, answering JSON in the shapes Queen's server
//! answers, one file per surface: the dead letters, the consumer groups, the messages, queen's own views of queues,
//! the resource views of queues, the status, the metrics series, retention, the KV rows and the
//! timers. They run no write; what the write side or the background work
//! also uses stays below and is imported.

pub mod dlq;
pub mod groups;
pub mod kv;
pub mod messages;
pub mod queues;
pub mod resources;
pub mod retention;
pub mod series;
pub mod status;
pub mod timers;
