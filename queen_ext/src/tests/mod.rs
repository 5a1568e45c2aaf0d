//! Tests that run inside PostgreSQL (`cargo pgrx test`), with the helpers
//! they share.

mod engine;
mod failures;
mod messages;
#[cfg(test)]
mod layout;
mod retention;
mod support;
mod sweeper;
