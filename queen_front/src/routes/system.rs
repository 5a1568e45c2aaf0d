//! The operator's switches, as Queen's system routes: push maintenance,
//! pop maintenance, the KV and timer switches, and the ephemeral queues'. Each is a row in the
//! database (`queen.system_state`), so every front-end obeys it.

use axum::extract::State;
use axum::routing::get;
use axum::Router;

use super::call::{json_body, pass, Answer};
use crate::access::{Admin, Authorized};
use crate::body::JsonBody;
use crate::state::AppState;

/// The switches. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/system/maintenance",
            get(maintenance).post(set_maintenance),
        )
        .route(
            "/api/v1/system/maintenance/pop",
            get(pop_maintenance).post(set_pop_maintenance),
        )
        .route(
            "/api/v1/system/kv-timers",
            get(kv_timers).post(set_kv_timers),
        )
        .route(
            "/api/v1/system/ephemeral",
            get(ephemeral).post(set_ephemeral),
        )
}

async fn read(state: &AppState, surface: &str) -> Answer {
    pass(state, "SELECT queen.system_switches($1)", &[&surface]).await
}

async fn set(state: &AppState, surface: &str, body: &axum::body::Bytes) -> Answer {
    let changes = json_body(body)?;
    pass(
        state,
        "SELECT queen.system_switches($1, $2::jsonb)",
        &[&surface, &changes],
    )
    .await
}

/// `GET /api/v1/system/maintenance`: whether pushes (and pops) are paused.
pub async fn maintenance(_: Authorized<Admin>, State(state): State<AppState>) -> Answer {
    read(&state, "maintenance").await
}

/// `POST /api/v1/system/maintenance` `{"enabled": bool}`: pauses pushes
/// (503 with Retry-After) or resumes them.
pub async fn set_maintenance(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    set(&state, "maintenance", &body).await
}

/// `GET /api/v1/system/maintenance/pop`.
pub async fn pop_maintenance(_: Authorized<Admin>, State(state): State<AppState>) -> Answer {
    read(&state, "pop").await
}

/// `POST /api/v1/system/maintenance/pop` `{"enabled": bool}`: every pop
/// answers empty (a waiting pop waits out its timeout) while it is on.
pub async fn set_pop_maintenance(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    set(&state, "pop", &body).await
}

/// `GET /api/v1/system/kv-timers`.
pub async fn kv_timers(_: Authorized<Admin>, State(state): State<AppState>) -> Answer {
    read(&state, "kv-timers").await
}

/// `POST /api/v1/system/kv-timers` `{kv?, timersSchedule?, timersFire?}`:
/// each given switch is set, the others are left alone.
pub async fn set_kv_timers(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    set(&state, "kv-timers", &body).await
}

/// `GET /api/v1/system/ephemeral`: whether the ephemeral queues run, and
/// what they hold.
pub async fn ephemeral(_: Authorized<Admin>, State(state): State<AppState>) -> Answer {
    read(&state, "ephemeral").await
}

/// `POST /api/v1/system/ephemeral` `{"enabled": bool}`: off, every
/// ephemeral write answers 503 `ephemeral_disabled` (Retry-After); the
/// reads still answer.
pub async fn set_ephemeral(
    _: Authorized<Admin>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    set(&state, "ephemeral", &body).await
}
