//! The background work: retention, the sweepers and the metrics series, each a bounded step
//! callable from SQL and a background worker that loops it.

pub mod bgworker;
pub mod metrics;
pub mod retention;
pub mod status;
pub mod sweeper;
pub mod unit;
