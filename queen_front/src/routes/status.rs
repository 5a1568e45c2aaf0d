//! Observation: health, the overview (also served as the status), the
//! analytics and the Prometheus metrics.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::call::{call, ok, Answer};
use crate::access::{Authorized, Public, ReadOnly};
use crate::query::{number, Params};
use crate::state::AppState;

/// What `/health` names as the engine answering (Queen's server names its own).
const ENGINE: &str = "queen-postgres";

/// 200 when the database answers and the extension is installed; 503 otherwise.
/// Both carry `engine` and `version` (the front-end's), as Queen's server does.
pub async fn health(_: Authorized<Public>, State(state): State<AppState>) -> Response {
    let version = env!("CARGO_PKG_VERSION");
    let sql = "SELECT json_build_object('extension', \
               (SELECT extversion FROM pg_extension WHERE extname = 'queen'))";
    let (error, code) = match call(&state, sql, &[]).await {
        Ok(v) if v["extension"].is_string() => {
            return Json(
                json!({"status": "healthy", "database": "connected", "engine": ENGINE,
                       "version": version, "extension": v["extension"]}),
            )
            .into_response()
        }
        Ok(_) => (
            "the queen extension is not installed".to_owned(),
            "unavailable",
        ),
        Err(e) => (e.message, e.code),
    };
    let body = json!({"status": "unhealthy", "database": "disconnected", "engine": ENGINE,
               "version": version, "error": error, "code": code});
    (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
}

/// The overview of every queue (served as the status too).
pub async fn overview(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.overview()", &[]).await?)
}

/// The query of the retention analytics.
#[derive(Deserialize)]
pub struct RetentionQuery {
    /// The bucket width, `hour` when absent (passed on as given otherwise).
    bucket: Option<String>,
    /// How far back, in hours (24 when absent or empty).
    hours: Option<String>,
}

/// The retention time series over the last `hours`, by `bucket`.
pub async fn retention_analytics(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Params(q): Params<RetentionQuery>,
) -> Answer {
    let bucket = q.bucket.unwrap_or_else(|| "hour".into());
    let hours = number("hours", &q.hours)?.unwrap_or(24) as f64;
    ok(call(
        &state,
        "SELECT queen.retention_timeseries(now() - make_interval(hours => $1::float8::int), $2)",
        &[&hours, &bucket],
    )
    .await?)
}

/// The sizes of queen's tables.
pub async fn postgres_stats(_: Authorized<ReadOnly>, State(state): State<AppState>) -> Answer {
    ok(call(&state, "SELECT queen.table_sizes()", &[]).await?)
}

/// Per-queue gauges and counters in the Prometheus text format.
pub async fn prometheus(_: Authorized<Public>, State(state): State<AppState>) -> Answer {
    let queues = call(&state, "SELECT queen.list_queues()", &[]).await?;
    let text = crate::metrics::prometheus_text(&queues);
    Ok(([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response())
}
