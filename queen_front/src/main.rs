//! queen_front: Queen's HTTP API over the queen extension. Start-up reads
//! and checks the settings (`startup`), the server accepts and serves
//! (`server`), the routes answer (`routes`).

/// Requests allocate and free many small buffers across the event-loop
/// threads; mimalloc serves that pattern well (`make bench WHAT=fusion`,
/// bench/RESULTS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod access;
mod auth;
mod body;
mod config;
mod cors;
mod dashboard;
mod db;
mod error;
mod fusion;
mod longpoll;
mod metrics;
mod query;
mod report;
mod routes;
mod runtime;
mod server;
mod startup;
mod state;
#[cfg(test)]
mod tests;
mod tls;

fn main() {
    startup::init_log();
    server::run(startup::Startup::from_env());
}
