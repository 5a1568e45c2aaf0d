//! Routes. Each is one SQL call to the extension's public API.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::AppState;

pub fn router(state: AppState) -> Router {
    Router::new().route("/health", get(health)).with_state(state)
}

/// 200 when the database answers and the extension is installed; 503 otherwise.
async fn health(State(state): State<AppState>) -> Response {
    let check = async {
        let client = state.pool.get().await.map_err(|e| e.to_string())?;
        let row = client
            .query_one("SELECT extversion FROM pg_extension WHERE extname = 'queen'", &[])
            .await
            .map_err(|e| e.to_string())?;
        Ok::<String, String>(row.get(0))
    };
    match tokio::time::timeout(state.config.request_timeout, check).await {
        Ok(Ok(version)) => Json(json!({"status": "healthy", "database": "connected", "extension": version})).into_response(),
        Ok(Err(e)) => unavailable(e),
        Err(_) => unavailable("database did not answer within the request timeout".into()),
    }
}

fn unavailable(error: String) -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"status": "unhealthy", "database": "disconnected", "error": error}))).into_response()
}
