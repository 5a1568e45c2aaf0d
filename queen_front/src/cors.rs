//! Browsers: CORS for the origins `QUEEN_CORS_ORIGINS` lists, and the guard
//! against cross-site requests that change state.
//!
//! Origins are compared exactly (scheme, host and port); there is no
//! wildcard. A preflight from a listed origin answers 204 with what it may
//! send; from any other origin it is refused. A request that changes state
//! (any method but GET, HEAD and OPTIONS, and the pops of the log and of
//! ephemeral queues, which are GETs that take leases) is refused before its handler runs when it carries an
//! `Origin` that is not listed, or says `Sec-Fetch-Site: cross-site` without
//! a listed `Origin`: a page elsewhere can not make a browser push, ack,
//! configure or delete, whatever content type it picks. Requests without
//! `Origin` (curl, the clients) are not affected. Reads from an unlisted
//! origin are served, without the headers that would let the page read them.
//!
//! The dashboard's own page is not cross-origin: a request whose `Origin` is
//! the very scheme and `Host` it was sent to is let through when that host is
//! an IP address or `localhost`. Through a DNS name the origin must be listed,
//! since a page elsewhere can make its own name resolve to this front-end
//! (DNS rebinding) and would then look like the front-end's own.
//!
//! For the same reason a front-end that listens on loopback without
//! authentication answers only requests whose `Host` is an IP address,
//! `localhost` or the host of a listed origin: through any other name a
//! page elsewhere could read it (a 403 before anything else runs).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// How long a browser may keep a preflight's answer (seconds). Not
/// measured: a usual value, short enough for a changed list to take hold.
const PREFLIGHT_MAX_AGE_S: &str = "600";
/// The methods and request headers a listed origin may use.
const ALLOW_METHODS: &str = "GET, POST, PUT, DELETE";
const ALLOW_HEADERS: &str = "authorization, content-type";
/// The answer headers a page may read besides the simple ones.
const EXPOSE_HEADERS: &str = "retry-after, www-authenticate";

/// The origins allowed to make cross-origin requests, lower-cased, and
/// whether the `Host` a request names is checked (a loopback front-end
/// without authentication, see [`Origins::guard_hosts`]).
#[derive(Clone, Debug, Default)]
pub struct Origins(Arc<[String]>, bool);

impl Origins {
    /// Parses the comma-separated list of `QUEEN_CORS_ORIGINS`: each entry
    /// `scheme://host[:port]`, scheme http or https, nothing after.
    pub fn parse(list: &str) -> Result<Origins, String> {
        let mut origins = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let refuse = |why: &str| Err(format!("QUEEN_CORS_ORIGINS: {entry:?} {why}"));
            if entry == "*" {
                return refuse("is not accepted: list each origin exactly (scheme://host[:port])");
            }
            let Some((scheme, rest)) = entry.split_once("://") else {
                return refuse("is not an origin (scheme://host[:port])");
            };
            if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
                return refuse("is not an http or https origin");
            }
            let bad = |c: char| "/?#@*".contains(c) || c.is_whitespace() || c.is_control();
            if rest.is_empty() || rest.contains(bad) {
                return refuse("is not an origin: scheme://host[:port] with no path");
            }
            origins.push(entry.to_ascii_lowercase());
        }
        Ok(Origins(origins.into(), false))
    }

    /// Checks the `Host` of every request: for a front-end that serves
    /// only this machine without authentication. A page elsewhere can make
    /// its own name resolve to 127.0.0.1 (DNS rebinding) and then read
    /// what the front-end answers as if it were its own; naming the
    /// front-end by such a name is refused.
    pub fn guard_hosts(self) -> Origins {
        Origins(self.0, true)
    }

    /// Whether a request naming `host` may be served: an IP address,
    /// `localhost`, or the host of a listed origin.
    fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        is_address(&host)
            || self.0.iter().any(|o| {
                o.split_once("://")
                    .is_some_and(|(_, rest)| rest == host || plain_host(rest) == plain_host(&host))
            })
    }

    /// Whether no origin is listed (read by the tests).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn allows(&self, origin: &HeaderValue) -> bool {
        origin
            .to_str()
            .is_ok_and(|o| self.0.iter().any(|allowed| allowed.eq_ignore_ascii_case(o)))
    }
}

/// Whether `origin` is the page's own: `http://` or `https://` and then
/// exactly the request's `Host`, which names an IP address or `localhost`.
fn own_page(origin: &HeaderValue, headers: &HeaderMap) -> bool {
    let (Ok(origin), Some(Ok(host))) = (
        origin.to_str(),
        headers.get(header::HOST).map(HeaderValue::to_str),
    ) else {
        return false;
    };
    let lower = origin.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    rest.eq_ignore_ascii_case(host) && is_address(rest)
}

/// Whether `host[:port]` names an IP address or `localhost`: names no page
/// elsewhere can make resolve here.
fn is_address(authority: &str) -> bool {
    plain_host(authority).is_some_and(|n| n == "localhost" || n.parse::<std::net::IpAddr>().is_ok())
}

/// `host[:port]` without its port (an IPv6 address without its brackets).
fn plain_host(authority: &str) -> Option<&str> {
    match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map(|(addr, _)| addr),
        None => Some(
            authority
                .rsplit_once(':')
                .map_or(authority, |(name, _)| name),
        ),
    }
}

/// The GETs that change state: the pops of the log and of ephemeral queues,
/// which take leases (with autoAck, consume) and register the consumer
/// group they name.
const STATEFUL_GETS: [&str; 2] = ["/api/v1/pop", "/api/v1/ephemeral/pop"];

fn changes_state(method: &Method, path: &str) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
        || STATEFUL_GETS.iter().any(|p| path.starts_with(p))
}

fn refused(message: String) -> Response {
    ApiError::new(StatusCode::FORBIDDEN, "forbidden", message).into_response()
}

fn shown(origin: &HeaderValue) -> String {
    String::from_utf8_lossy(origin.as_bytes()).into_owned()
}

fn allow_origin(headers: &mut HeaderMap, origin: HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
}

pub async fn guard(State(origins): State<Origins>, req: Request, next: Next) -> Response {
    if let Some(refusal) = host_refused(&origins, &req) {
        return refusal;
    }
    let origin = req.headers().get(header::ORIGIN).cloned();
    let allowed = origin.as_ref().is_some_and(|o| origins.allows(o));
    let own = origin.as_ref().is_some_and(|o| own_page(o, req.headers()));
    let preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = match &origin {
        Some(o) if preflight => {
            if !allowed {
                return refused(format!("origin {:?} is not allowed", shown(o)));
            }
            preflight_answer(o)
        }
        _ => {
            if changes_state(req.method(), req.uri().path()) && !allowed && !own {
                if let Some(refusal) = cross_site_refused(&req, origin.as_ref()) {
                    return refusal;
                }
            }
            let mut response = next.run(req).await;
            if let Some(o) = origin.as_ref().filter(|_| allowed) {
                let headers = response.headers_mut();
                allow_origin(headers, o.clone());
                headers.insert(
                    header::ACCESS_CONTROL_EXPOSE_HEADERS,
                    HeaderValue::from_static(EXPOSE_HEADERS),
                );
            }
            response
        }
    };
    if origin.is_some() {
        response
            .headers_mut()
            .append(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

/// The 403 for a request naming a host that may not be served, when the
/// `Host` of every request is checked.
fn host_refused(origins: &Origins, req: &Request) -> Option<Response> {
    if !origins.1 {
        return None;
    }
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()));
    let host = host.filter(|h| !origins.host_allowed(h))?;
    Some(refused(format!(
        "a request for host {host:?} is refused: without authentication this \
         front-end answers only to an IP address, localhost or the host of an \
         origin QUEEN_CORS_ORIGINS lists"
    )))
}

/// The 204 that answers a preflight from the listed origin `origin`.
fn preflight_answer(origin: &HeaderValue) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    allow_origin(headers, origin.clone());
    for (name, value) in [
        (header::ACCESS_CONTROL_ALLOW_METHODS, ALLOW_METHODS),
        (header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS),
        (header::ACCESS_CONTROL_MAX_AGE, PREFLIGHT_MAX_AGE_S),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// The 403 for a request that changes state and comes from neither an
/// allowed origin nor the page's own: any that names its `Origin`, or one
/// its browser says is cross-site.
fn cross_site_refused(req: &Request, origin: Option<&HeaderValue>) -> Option<Response> {
    if let Some(o) = origin {
        return Some(refused(format!(
            "a {} from origin {:?} is refused: the origin is not allowed",
            req.method(),
            shown(o)
        )));
    }
    let site = req.headers().get("sec-fetch-site");
    if site.is_some_and(|s| s.as_bytes().eq_ignore_ascii_case(b"cross-site")) {
        return Some(refused(format!("a cross-site {} is refused", req.method())));
    }
    None
}
