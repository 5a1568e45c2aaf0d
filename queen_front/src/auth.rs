//! JWT (HS256) when JWT_SECRET is set: every route but /health needs a valid
//! bearer token, and the producer identity stamped into pushed frames is the
//! token's `sub`, never anything the request says.

use axum::http::HeaderMap;
use jsonwebtoken::{decode, Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use crate::error::ApiError;

#[derive(Debug, Deserialize)]
struct Claims {
    sub: Option<String>,
}

#[derive(Clone)]
pub struct Auth {
    key: Option<DecodingKey>,
}

impl Auth {
    pub fn new(secret: Option<&str>) -> Auth {
        Auth {
            key: secret.map(|s| DecodingKey::from_secret(s.as_bytes())),
        }
    }

    /// The caller's subject: None when authentication is off; an error when
    /// it is on and the token is missing or invalid.
    pub fn subject(&self, headers: &HeaderMap) -> Result<Option<String>, ApiError> {
        let Some(key) = &self.key else {
            return Ok(None);
        };
        let unauthorized = |m: &str| {
            ApiError::new(axum::http::StatusCode::UNAUTHORIZED, "unauthorized", m)
                .with_header(axum::http::header::WWW_AUTHENTICATE, "Bearer")
        };
        let header = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .ok_or_else(|| unauthorized("missing bearer token"))?;
        let token = header
            .strip_prefix("Bearer ")
            .ok_or_else(|| unauthorized("authorization is not a bearer token"))?;
        let mut validation = Validation::new(Algorithm::HS256);
        validation.required_spec_claims.clear();
        validation.validate_exp = true;
        let data = decode::<Claims>(token, key, &validation)
            .map_err(|e| unauthorized(&format!("invalid token: {e}")))?;
        Ok(Some(data.claims.sub.unwrap_or_default()))
    }
}
