//! queen_front: Queen's HTTP API over the queen extension.

mod auth;
mod config;
mod db;
mod error;
mod longpoll;
mod routes;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use tracing_subscriber::EnvFilter;

#[derive(Clone)]
pub struct AppState {
    pub pool: deadpool_postgres::Pool,
    pub config: Arc<config::Config>,
    pub auth: auth::Auth,
    pub waiters: longpoll::Waiters,
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

/// Answers an oversize body with JSON like every other refusal.
async fn json_413(response: Response) -> Response {
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
        let limit = std::env::var("QUEEN_BODY_LIMIT_BYTES").unwrap_or_else(|_| (16 * 1024 * 1024).to_string());
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            Json(serde_json::json!({"success": false, "error": format!("request body larger than {limit} bytes")})),
        )
            .into_response();
    }
    response
}

fn fail(msg: String) -> ! {
    eprintln!("queen_front: {msg}");
    std::process::exit(2);
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let config = config::Config::from_env().unwrap_or_else(|e| fail(e));
    let pool = db::pool(&config).unwrap_or_else(|e| fail(e));
    let addr = format!("{}:{}", config.host, config.port);
    let state = AppState {
        waiters: longpoll::Waiters::new(pool.clone(), config.long_poll_period),
        auth: auth::Auth::new(config.jwt_secret.as_deref()),
        pool,
        config: Arc::new(config),
    };
    let limit = state.config.body_limit_bytes;
    let app = routes::router(state)
        .layer(axum::middleware::map_response(json_413))
        .layer(DefaultBodyLimit::max(limit))
        .layer(tower_http::trace::TraceLayer::new_for_http());
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap_or_else(|e| fail(format!("binding {addr}: {e}")));
    tracing::info!(%addr, "listening");
    axum::serve(listener, app).with_graceful_shutdown(shutdown_signal()).await.expect("server");
}
