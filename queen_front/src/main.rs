//! queen_front: Queen's HTTP API over the queen extension.

mod config;
mod db;
mod routes;

use std::sync::Arc;

use tracing_subscriber::EnvFilter;

#[derive(Clone)]
pub struct AppState {
    pub pool: deadpool_postgres::Pool,
    pub config: Arc<config::Config>,
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => {},
        _ = term.recv() => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt().with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))).init();
    let config = match config::Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("queen_front: {e}");
            std::process::exit(2);
        }
    };
    let pool = match db::pool(&config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("queen_front: {e}");
            std::process::exit(2);
        }
    };
    let addr = format!("{}:{}", config.host, config.port);
    let state = AppState { pool, config: Arc::new(config) };
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("queen_front: binding {addr}: {e}");
            std::process::exit(1);
        }
    };
    tracing::info!(%addr, "listening");
    axum::serve(listener, routes::router(state)).with_graceful_shutdown(shutdown_signal()).await.expect("server");
}
