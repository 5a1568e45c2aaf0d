//! Bearer tokens (JWT). Authentication is on when a key is configured:
//! `JWT_SECRET` for HS256, a PEM public key (`JWT_PUBLIC_KEY`, or the file
//! `QUEEN_JWT_PUBLIC_KEY_FILE`) for RS256, or both; a token's header says
//! which it is, and a token signed any other way (`none`, HS384, ES256, ...)
//! is refused. Every token must carry `exp`; `exp` and `nbf` are checked with
//! `QUEEN_JWT_LEEWAY_S` of leeway, `iss` and `aud` when `QUEEN_JWT_ISSUER` /
//! `QUEEN_JWT_AUDIENCE` are set.
//!
//! What a token may do is read from its roles, as Queen's broker reads them:
//! one role in the `role` claim, or several in `roles`, each one of
//! `read-only`, `write-only`, `read-write` and `admin`. The producer stamped
//! into pushed frames is the token's `sub`, never anything the request says.

use std::sync::Arc;

use axum::http::{header, HeaderMap, StatusCode};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use crate::config::JwtConfig;
use crate::error::ApiError;

/// The claims that name a token's roles.
const ROLE_CLAIM: &str = "role";
const ROLES_CLAIM: &str = "roles";

/// What a route needs of its caller's roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// No token needed.
    Public,
    /// Reads: `read-only`, `read-write` or `admin`.
    ReadOnly,
    /// Producing only: `write-only`, `read-write` or `admin`.
    WriteOnly,
    /// Consuming and changing state: `read-write` or `admin`.
    ReadWrite,
    /// Deleting and administration: `admin`.
    Admin,
}

impl Level {
    /// The roles that meet this level, for a refusal's message.
    pub fn roles(self) -> &'static str {
        match self {
            Level::Public => "none",
            Level::ReadOnly => "read-only, read-write or admin",
            Level::WriteOnly => "write-only, read-write or admin",
            Level::ReadWrite => "read-write or admin",
            Level::Admin => "admin",
        }
    }
}

/// The roles a token holds. `write-only` and `read-only` are side by side,
/// not above one another: a producer's token reads nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    pub read_only: bool,
    pub write_only: bool,
    pub read_write: bool,
    pub admin: bool,
}

impl Grants {
    fn from_claims(claims: &Map<String, Value>) -> Grants {
        let mut grants = Grants::default();
        let single = claims.get(ROLE_CLAIM).into_iter();
        let several = claims
            .get(ROLES_CLAIM)
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for role in single.chain(several).filter_map(Value::as_str) {
            match role {
                "read-only" => grants.read_only = true,
                "write-only" => grants.write_only = true,
                "read-write" => grants.read_write = true,
                "admin" => grants.admin = true,
                _ => {}
            }
        }
        grants
    }

    pub fn allows(self, level: Level) -> bool {
        let read_write = self.read_write || self.admin;
        match level {
            Level::Public => true,
            Level::ReadOnly => self.read_only || read_write,
            Level::WriteOnly => self.write_only || read_write,
            Level::ReadWrite => read_write,
            Level::Admin => self.admin,
        }
    }
}

/// A token that passed every check.
#[derive(Debug)]
pub struct Verified {
    pub subject: Option<String>,
    pub grants: Grants,
}

struct Keys {
    hs256: Option<DecodingKey>,
    rs256: Option<DecodingKey>,
    leeway_s: u64,
    issuer: Option<String>,
    audience: Option<String>,
}

/// The token check, shared by every thread; off when no key is configured.
#[derive(Clone)]
pub struct Auth {
    keys: Option<Arc<Keys>>,
}

fn unauthorized(message: impl Into<String>, token_given: bool) -> ApiError {
    let challenge = if token_given {
        "Bearer error=\"invalid_token\""
    } else {
        "Bearer"
    };
    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
        .with_header(header::WWW_AUTHENTICATE, challenge)
}

/// What the user is told of a token that failed a check.
fn refusal(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidIssuer => "the token's issuer is not accepted".into(),
        ErrorKind::InvalidAudience => "the token's audience is not accepted".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        ErrorKind::InvalidSignature => "the token's signature is not valid".into(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm is not accepted".into(),
        _ => "the token is malformed".into(),
    }
}

impl Auth {
    pub fn new(config: &JwtConfig) -> Result<Auth, String> {
        let hs256 = config
            .secret
            .as_ref()
            .map(|s| DecodingKey::from_secret(s.as_bytes()));
        let rs256 =
            match &config.public_key_pem {
                None => None,
                Some(pem) => Some(DecodingKey::from_rsa_pem(pem.as_bytes()).map_err(|e| {
                    format!("the JWT public key is not an RSA public key in PEM: {e}")
                })?),
            };
        if hs256.is_none() && rs256.is_none() {
            return Ok(Auth { keys: None });
        }
        Ok(Auth {
            keys: Some(Arc::new(Keys {
                hs256,
                rs256,
                leeway_s: config.leeway_s,
                issuer: config.issuer.clone(),
                audience: config.audience.clone(),
            })),
        })
    }

    pub fn is_on(&self) -> bool {
        self.keys.is_some()
    }

    /// The caller a request's bearer token names: None when authentication
    /// is off; a 401 when it is on and the token is missing or fails a check.
    pub fn verify(&self, headers: &HeaderMap) -> Result<Option<Verified>, ApiError> {
        let Some(keys) = &self.keys else {
            return Ok(None);
        };
        let value = headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| unauthorized("a bearer token is required", false))?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or_else(|| unauthorized("the authorization header is not a bearer token", false))?;
        let head = decode_header(token).map_err(|_| {
            unauthorized(
                "the token is malformed or its algorithm is not accepted",
                true,
            )
        })?;
        let key = match head.alg {
            Algorithm::HS256 => keys.hs256.as_ref(),
            Algorithm::RS256 => keys.rs256.as_ref(),
            _ => None,
        }
        .ok_or_else(|| {
            unauthorized(
                format!("tokens signed with {:?} are not accepted", head.alg),
                true,
            )
        })?;
        let mut validation = Validation::new(head.alg);
        validation.leeway = keys.leeway_s;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        let mut required = vec!["exp"];
        if let Some(issuer) = &keys.issuer {
            validation.set_issuer(&[issuer]);
            required.push("iss");
        }
        match &keys.audience {
            Some(audience) => {
                validation.set_audience(&[audience]);
                required.push("aud");
            }
            None => validation.validate_aud = false,
        }
        validation.set_required_spec_claims(&required);
        let data = decode::<Map<String, Value>>(token, key, &validation)
            .map_err(|e| unauthorized(refusal(e.kind()), true))?;
        Ok(Some(Verified {
            subject: data
                .claims
                .get("sub")
                .and_then(Value::as_str)
                .map(str::to_owned),
            grants: Grants::from_claims(&data.claims),
        }))
    }
}
