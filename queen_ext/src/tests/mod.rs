//! Tests that run inside PostgreSQL (`cargo pgrx test`), with the helpers
//! they share.

mod conflation;
mod engine;
mod ephemeral;
mod failures;
mod front_metrics;
mod fused;
mod known;
#[cfg(test)]
mod layout;
mod memo;
mod messages;
mod metrics;
mod moves;
mod queues;
mod retention;
mod streams;
mod support;
mod sweeper;
