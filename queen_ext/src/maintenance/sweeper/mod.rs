//! The sweeper: timers fired into the log, leaderless under SKIP LOCKED.
//!
//! PROBE (one read-only call, one now()), DRAIN (claim and fire in the same
//! iteration, claiming stops at half the lease), SLEEP (a pure function of
//! four bands). Every worker scans every shard; only the shard it starts at
//! differs. No advisory lock, no election.

pub mod drain;
pub mod metrics;
pub mod sleep;
pub mod worker;
