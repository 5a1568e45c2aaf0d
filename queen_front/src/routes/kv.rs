//! The key-value store and its one-key routes, locks and semaphores.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::{call, json_body, ok, pass, Answer};
use crate::access::{Authorized, ReadOnly, ReadWrite};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::query::Params;
use crate::state::AppState;

/// The KV and lock routes. Merged into the router by `routes::router`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/kv", post(kv))
        .route(
            "/api/v1/kv/{ns}/{*key}",
            get(kv_get).put(kv_put).delete(kv_delete),
        )
        .route("/api/v1/locks", post(locks))
}

/// KV ops in one transaction: `{"operations": [...]}` -> `{"results": [...]}`.
/// A lost precondition is a verdict in the answer (HTTP 200), never an error.
pub async fn kv(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    pass(&state, "SELECT queen.kv($1::jsonb)", &[&body]).await
}

async fn kv_one(state: &AppState, op: Value) -> Answer {
    let answer = call(
        state,
        "SELECT queen.kv($1::jsonb)",
        &[&json!({"operations": [op]})],
    )
    .await?;
    ok(answer["results"][0].clone())
}

/// Sugar for curl: one key.
pub async fn kv_get(
    _: Authorized<ReadOnly>,
    State(state): State<AppState>,
    Path((ns, key)): Path<(String, String)>,
) -> Answer {
    kv_one(&state, json!({"op": "get", "ns": ns, "key": key})).await
}

/// Sugar for curl: the body is `{"value", "ttlSeconds" | "forever", "expect"?}`.
pub async fn kv_put(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path((ns, key)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Answer {
    let mut op = json_body(&body)?;
    let Some(fields) = op.as_object_mut() else {
        return Err(ApiError::bad_request(
            "body: must be an object with value and ttlSeconds or forever",
        ));
    };
    fields.insert("op".into(), json!("put"));
    fields.insert("ns".into(), json!(ns));
    fields.insert("key".into(), json!(key));
    kv_one(&state, op).await
}

/// The query of the one-key delete.
#[derive(Deserialize)]
pub struct DeleteQuery {
    /// The version the key must have (empty is refused, as any non-integer).
    expect: Option<String>,
}

/// Sugar for curl: deletes one key, at the version `expect` when given.
pub async fn kv_delete(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    Path((ns, key)): Path<(String, String)>,
    Params(q): Params<DeleteQuery>,
) -> Answer {
    let mut op = json!({"op": "delete", "ns": ns, "key": key});
    if let Some(e) = q.expect {
        op["expect"] = json!(e
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request("expect: must be a version (an integer)"))?);
    }
    kv_one(&state, op).await
}

/// Locks and semaphores: acquire, renew, release, get. A lock held by
/// another is an answer (HTTP 200), not an error.
pub async fn locks(
    _: Authorized<ReadWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Answer {
    let body = json_body(&body)?;
    pass(&state, "SELECT queen.locks($1::jsonb)", &[&body]).await
}
