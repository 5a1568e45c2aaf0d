//! Query strings. A route's parameters arrive as a struct of its own
//! (`Params<T>`), each parameter as the text it was given: a parameter given
//! twice counts once, with its last value, and parameters a route does not
//! know are ignored. The route converts the text by the rules below, in the
//! order it reads its parameters, so the first bad one is the one a 400
//! names, in the JSON body every refusal has.

use std::collections::HashMap;

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ApiError;

/// The query parameters of a route, as `T` (a struct whose fields are
/// `Option<String>`, named as the parameters are).
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Params<T>, Response> {
        // Read as a map first: the last of a repeated parameter wins, where
        // a struct read straight from the query string would refuse it.
        let Query(given) = Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let fields: Map<String, Value> = given
            .into_iter()
            .map(|(key, value)| (key, Value::String(value)))
            .collect();
        T::deserialize(Value::Object(fields))
            .map(Params)
            .map_err(|e| ApiError::bad_request(format!("query: {e}")).into_response())
    }
}

/// A parameter that counts only when it is not empty.
pub fn text(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

/// A flag: absent, empty, `false` or `0` is false; `true` or `1` is true;
/// anything else is refused.
pub fn flag(key: &str, value: &Option<String>) -> Result<bool, ApiError> {
    match value.as_deref() {
        None | Some("") | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "{key}: {other:?} is not true or false"
        ))),
    }
}

/// A flag read as Queen's server reads it: `false`, `0` or `no` is false;
/// `true`, `1` or `yes` is true; absent or empty is `default`. Any other
/// value is refused (Queen's server falls back to the default).
pub fn qbool(key: &str, value: &Option<String>, default: bool) -> Result<bool, ApiError> {
    match value.as_deref() {
        None | Some("") => Ok(default),
        Some("false" | "0" | "no") => Ok(false),
        Some("true" | "1" | "yes") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "{key}: {other:?} is not one of true, false, 1, 0, yes, no"
        ))),
    }
}

/// A number: absent or empty is none; anything but an integer is refused.
pub fn number(key: &str, value: &Option<String>) -> Result<Option<i64>, ApiError> {
    text(value)
        .map(|v| {
            v.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("{key}: {v:?} is not an integer")))
        })
        .transpose()
}
