//! What queen's benchmarks share: connecting to the bench cluster
//! ([`connect`]), the cluster's own counters and pgmq's install ([`cluster`]), the messages the
//! benches send and the pop answers and acks they read and write
//! ([`payload`]), and workloads run on many connections and measured side by
//! side in interleaved rounds ([`rounds`]).
//!
//! Each benchmark is a binary beside this library (`src/bin/`): `engine`,
//! `http`, `retention`, `sweeper`, `fusion`, `shards` and `xmin`, each keeping only its own workloads
//! and the figures it prints.

pub mod cluster;
pub mod connect;
pub mod payload;
pub mod rounds;
