//! Request bodies, by content type. A JSON route takes `application/json`
//! (parameters such as `charset` allowed); push and transaction take their
//! binary body too, as `application/x-queen-push`. Any other content type is
//! refused with 415 before the body is read. An empty body needs none (the
//! clients send a bodiless POST for `{}`), but a body that is there must say
//! what it is: a browser form or a `text/plain` request never reaches the
//! database.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, StatusCode};

use crate::error::ApiError;
use crate::state::AppState;

pub const JSON: &str = "application/json";
pub const PUSH_BINARY: &str = "application/x-queen-push";

/// What the request's `content-type` says the body is.
enum Declared {
    None,
    Json,
    PushBinary,
    Other(String),
}

fn declared(headers: &HeaderMap) -> Declared {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Declared::None;
    };
    let Ok(text) = value.to_str() else {
        return Declared::Other(String::from_utf8_lossy(value.as_bytes()).into_owned());
    };
    let essence = text.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case(JSON) {
        Declared::Json
    } else if essence.eq_ignore_ascii_case(PUSH_BINARY) {
        Declared::PushBinary
    } else {
        Declared::Other(text.to_owned())
    }
}

fn unsupported(given: Option<&str>, accepted: &str) -> ApiError {
    let message = match given {
        Some(t) => format!("content-type {t:?} is not accepted here: send {accepted}"),
        None => format!("a request body needs a content-type: send {accepted}"),
    };
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        message,
    )
}

async fn read(req: Request, state: &AppState) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large(state.config.body_limit_bytes)
        } else {
            ApiError::bad_request("the request body could not be read")
        }
    })
}

/// The body of a JSON route.
pub struct JsonBody(pub Bytes);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<JsonBody, ApiError> {
        match declared(req.headers()) {
            Declared::Json => Ok(JsonBody(read(req, state).await?)),
            Declared::None => {
                let body = read(req, state).await?;
                if body.is_empty() {
                    Ok(JsonBody(body))
                } else {
                    Err(unsupported(None, JSON))
                }
            }
            Declared::PushBinary => Err(unsupported(Some(PUSH_BINARY), JSON)),
            Declared::Other(t) => Err(unsupported(Some(&t), JSON)),
        }
    }
}

/// The body of push and transaction: JSON or the binary body.
pub enum WriteBody {
    Json(Bytes),
    Binary(Bytes),
}

const WRITE_TYPES: &str = "application/json or application/x-queen-push";

impl FromRequest<AppState> for WriteBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<WriteBody, ApiError> {
        match declared(req.headers()) {
            Declared::Json => Ok(WriteBody::Json(read(req, state).await?)),
            Declared::PushBinary => Ok(WriteBody::Binary(read(req, state).await?)),
            Declared::None => {
                let body = read(req, state).await?;
                if body.is_empty() {
                    Ok(WriteBody::Json(body))
                } else {
                    Err(unsupported(None, WRITE_TYPES))
                }
            }
            Declared::Other(t) => Err(unsupported(Some(&t), WRITE_TYPES)),
        }
    }
}
