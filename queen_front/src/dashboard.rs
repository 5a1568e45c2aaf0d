//! The dashboard: one page at `/` and its bundled script and stylesheet
//! under `/dashboard/`, built into the binary (`build.rs`). The page holds
//! no data: it calls the API routes like any client, with the token the
//! user gives it, so it needs none itself. `QUEEN_DASHBOARD=off` leaves both
//! routes answering as unknown ones.

use axum::extract::{Path, State};
use axum::http::header::{self, HeaderName, HeaderValue};
use axum::http::{Method, Uri};
use axum::response::{IntoResponse, Response};

use crate::access::{Authorized, Public};
use crate::state::AppState;

include!(concat!(env!("OUT_DIR"), "/dashboard/dashboard_assets.rs"));

/// The page may run only its own script, talk only to this front-end, and
/// may not be framed by another site.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";
/// An asset's name holds a hash of its bytes: a browser may keep it for good.
const ASSET_CACHE: &str = "public, max-age=31536000, immutable";

fn unknown(method: &Method, uri: &Uri) -> Response {
    crate::error::ApiError::unknown_route(method, uri).into_response()
}

fn headers(kind: &'static str, cache: &'static str) -> [(HeaderName, HeaderValue); 3] {
    [
        (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
        (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
    ]
}

/// `GET /`: the page.
pub async fn page(
    _: Authorized<Public>,
    State(state): State<AppState>,
    method: Method,
    uri: Uri,
) -> Response {
    if !state.config.dashboard {
        return unknown(&method, &uri);
    }
    (
        headers("text/html; charset=utf-8", "no-cache"),
        [
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(PAGE_POLICY),
            ),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            ),
        ],
        INDEX_HTML,
    )
        .into_response()
}

/// `GET /dashboard/{file}`: the script or the stylesheet the page names.
pub async fn asset(
    _: Authorized<Public>,
    State(state): State<AppState>,
    Path(file): Path<String>,
    method: Method,
    uri: Uri,
) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, kind, bytes)) if state.config.dashboard => {
            (headers(kind, ASSET_CACHE), *bytes).into_response()
        }
        _ => unknown(&method, &uri),
    }
}
