//! What every route is made of: one call to the extension's SQL API within
//! the request timeout, the request body passed on, the answer sent back.

use axum::body::Bytes;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use tokio_postgres::types::ToSql;

use crate::error::ApiError;
use crate::state::AppState;

/// What a handler answers: its response, or the refusal as JSON.
pub type Answer = Result<Response, ApiError>;

/// Runs one SQL call answering one value (JSON, or bytes), within the
/// request timeout.
pub async fn call_as<T>(
    state: &AppState,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<T, ApiError>
where
    T: for<'a> tokio_postgres::types::FromSql<'a>,
{
    crate::db::one_value(&state.pool, state.config.request_timeout, sql, params).await
}

/// A JSON answer as the extension wrote it, not parsed here: a payload
/// this side could not read back (a lone surrogate escape, nesting deeper
/// than serde_json's 128 levels) goes to the client as it was stored.
pub struct RawJson(pub String);

impl<'a> tokio_postgres::types::FromSql<'a> for RawJson {
    fn from_sql(
        ty: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<RawJson, Box<dyn std::error::Error + Sync + Send>> {
        // jsonb's binary form is a version byte (1) and the text.
        let text = if *ty == tokio_postgres::types::Type::JSONB {
            match raw.split_first() {
                Some((1, rest)) => rest,
                _ => return Err("jsonb of an unknown binary version".into()),
            }
        } else {
            raw
        };
        Ok(RawJson(std::str::from_utf8(text)?.to_owned()))
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        matches!(
            *ty,
            tokio_postgres::types::Type::JSON | tokio_postgres::types::Type::JSONB
        )
    }
}

/// Runs one SQL call answering JSON and sends that answer on as a 200,
/// unparsed ([`RawJson`]), within the request timeout.
pub async fn pass(state: &AppState, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Answer {
    json_text(call_as::<RawJson>(state, sql, params).await?.0)
}

/// Runs one SQL call answering JSON, within the request timeout.
pub async fn call(
    state: &AppState,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Value, ApiError> {
    call_as::<Value>(state, sql, params).await
}

/// The elements of the array at `key` of an extension's answer (none when
/// it holds no array there).
pub fn rows<'a>(answer: &'a Value, key: &str) -> &'a [Value] {
    answer[key]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A JSON value as a 200.
pub fn ok(v: Value) -> Answer {
    Ok(Json(v).into_response())
}

/// A JSON answer the extension already wrote, passed on as it is.
pub fn json_text(text: String) -> Answer {
    Ok(([(header::CONTENT_TYPE, "application/json")], text).into_response())
}

/// A JSON request body passed on as text, for the extension to parse once.
pub fn text_body(body: &Bytes) -> Result<&str, ApiError> {
    std::str::from_utf8(body).map_err(|_| ApiError::bad_request("malformed JSON body: not UTF-8"))
}

/// A JSON request body parsed (an empty one is `{}`); malformed JSON is a 400.
pub fn json_body(body: &Bytes) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))
}
