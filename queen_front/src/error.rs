//! Errors as HTTP answers: a status chosen by SQLSTATE (never by message
//! text) and a JSON body naming the problem.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub code: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            code: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }
}

/// The HTTP status for a SQLSTATE raised by the extension or the database.
pub fn status_for(sqlstate: &str) -> StatusCode {
    match sqlstate {
        // Bad input: invalid value, wrong type, too long, bad text or binary.
        "22023" | "42804" | "22001" | "22P02" | "22P03" | "22004" | "22007" | "22008" => {
            StatusCode::BAD_REQUEST
        }
        "42704" => StatusCode::NOT_FOUND,
        // A request over a configured bound (batch, value size).
        "54000" => StatusCode::PAYLOAD_TOO_LARGE,
        // A namespace's storage quota.
        "53400" => StatusCode::FORBIDDEN,
        // A lease that is not held, a concurrent delete: retry or re-pop.
        "55000" | "40001" | "23503" | "23505" | "40P01" => StatusCode::CONFLICT,
        // Canceled (statement timeout), shutting down, too many connections.
        "57014" | "57P01" | "57P02" | "57P03" | "53300" => StatusCode::SERVICE_UNAVAILABLE,
        s if s.starts_with("08") => StatusCode::SERVICE_UNAVAILABLE,
        s if s.starts_with("22") => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The machine-readable code a client branches on, chosen by SQLSTATE.
pub fn code_for(sqlstate: &str) -> Option<&'static str> {
    Some(match sqlstate {
        "53400" => "storage_quota_exceeded",
        "54000" => "request_too_large",
        "42704" => "not_found",
        "55000" => "precondition_failed",
        "40001" | "40P01" => "retry",
        s if s.starts_with("22") || s == "42804" => "invalid_request",
        _ => return None,
    })
}

impl From<tokio_postgres::Error> for ApiError {
    fn from(e: tokio_postgres::Error) -> ApiError {
        match e.as_db_error() {
            Some(db) => ApiError {
                status: status_for(db.code().code()),
                message: db.message().to_owned(),
                code: Some(db.code().code().to_owned()),
            },
            // No answer from the server: the database is down or the
            // connection broke.
            None => ApiError::unavailable(format!("database unavailable: {e}")),
        }
    }
}

impl From<deadpool_postgres::PoolError> for ApiError {
    fn from(e: deadpool_postgres::PoolError) -> ApiError {
        ApiError::unavailable(format!("no database connection available: {e}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({"success": false, "error": self.message});
        if let Some(state) = &self.code {
            body["sqlstate"] = json!(state);
            if let Some(code) = code_for(state) {
                body["code"] = json!(code);
            }
        }
        (self.status, Json(body)).into_response()
    }
}
