//! The background work: retention and the sweepers, each a bounded step
//! callable from SQL and a background worker that loops it.

pub mod bgworker;
pub mod retention;
pub mod sweeper;
pub mod unit;
