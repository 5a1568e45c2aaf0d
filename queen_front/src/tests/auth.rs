//! Bearer tokens and the roles each route needs. The keys under `keys/` are
//! throwaway RSA keys made for these tests.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use super::fakepg::{FakePg, Reply, TEXT};
use super::{app, send};
use crate::access::level;
use crate::auth::Level;

const SECRET: &str = "a test secret, long enough for HS256";
const RS_PRIVATE: &str = include_str!("keys/rs256-test.key");
const RS_PUBLIC: &str = include_str!("keys/rs256-test.pub");
const RS_OTHER_PRIVATE: &str = include_str!("keys/rs256-other.key");

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn hs(claims: Value) -> String {
    hs_with(Algorithm::HS256, SECRET.as_bytes(), claims)
}

fn hs_with(alg: Algorithm, secret: &[u8], claims: Value) -> String {
    encode(
        &Header::new(alg),
        &claims,
        &EncodingKey::from_secret(secret),
    )
    .unwrap()
}

fn rs(private_pem: &str, claims: Value) -> String {
    let key = EncodingKey::from_rsa_pem(private_pem.as_bytes()).unwrap();
    encode(&Header::new(Algorithm::RS256), &claims, &key).unwrap()
}

/// Claims of a token that passes every check, with `role`.
fn claims(role: &str) -> Value {
    json!({"sub": "tester", "role": role, "exp": now() + 600})
}

fn with_token(method: &str, uri: &str, token: Option<&str>, body: Option<&str>) -> Request<Body> {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    req.body(Body::from(body.unwrap_or("").to_owned())).unwrap()
}

fn hs_front(extra: &[(&str, &str)]) -> Router {
    let mut vars = vec![("JWT_SECRET", SECRET)];
    vars.extend_from_slice(extra);
    app(&vars)
}

/// Whether the token got past the access layer: anything but 401 and 403
/// (the database behind is unreachable, so a served route answers 503).
async fn passes(app: &Router, token: &str) -> bool {
    let answer = send(
        app,
        with_token("GET", "/api/v1/resources/queues", Some(token), None),
    )
    .await;
    !matches!(answer.status.as_u16(), 401 | 403)
}

/// A route the routes' files declare: its method and template, a path that
/// reaches it, a body for the methods that take one, and the level its
/// handler needs (its `Authorized<_>`).
struct Route {
    method: String,
    template: String,
    path: String,
    body: Option<&'static str>,
    needed: Level,
}

/// Every route the routes' files declare, read from their source with the
/// level each handler states (a HEAD beside every GET): a route added beside
/// its handler is checked here without anyone listing it again.
fn routes() -> Vec<Route> {
    const BODY: &str = r#"{"queue": "q", "subscriptionTimestamp": "2026-01-01T00:00:00Z"}"#;
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src/routes"));
    let source = |module: &str| std::fs::read_to_string(dir.join(format!("{module}.rs"))).unwrap();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().path();
        let module = file.file_stem().unwrap().to_str().unwrap().to_owned();
        let text = source(&module);
        for call in text.split(".route(").skip(1) {
            let Some(rest) = call.trim_start().strip_prefix('"') else {
                continue;
            };
            let template = rest.split('"').next().unwrap().to_owned();
            let methods = &rest[template.len() + 1..];
            // The method router: what follows the template up to the call's close.
            let mut depth = 1;
            let end = methods
                .char_indices()
                .find_map(|(i, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(i)
                })
                .expect("a route's call ends");
            let methods = &methods[..end];
            for (method, handler) in method_handlers(methods) {
                let (module, handler) = match handler.rsplit_once("::") {
                    Some((path, name)) => (
                        path.rsplit("::").next().unwrap().to_owned(),
                        name.to_owned(),
                    ),
                    None => (module.clone(), handler),
                };
                let needed = if module == "crate" || module == "dashboard" {
                    Level::Public
                } else {
                    handler_level(&source(&module), &handler)
                };
                let path = example_path(&template);
                let body = matches!(method, "POST" | "PUT").then_some(BODY);
                if method == "GET" {
                    out.push(Route {
                        method: "HEAD".into(),
                        template: template.clone(),
                        path: path.clone(),
                        body: None,
                        needed,
                    });
                }
                out.push(Route {
                    method: method.into(),
                    template: template.clone(),
                    path,
                    body,
                    needed,
                });
            }
        }
    }
    assert!(
        out.len() > 100,
        "the routes' files declare {} routes",
        out.len()
    );
    out
}

/// The (method, handler) pairs of a method router's source, such as
/// `get(queue).delete(super::queues::delete_queue)`.
fn method_handlers(methods: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (name, method) in [
        ("get", "GET"),
        ("post", "POST"),
        ("put", "PUT"),
        ("delete", "DELETE"),
    ] {
        for pattern in [format!(".{name}("), format!("{name}(")] {
            for (at, _) in methods.match_indices(&pattern) {
                let before = methods[..at].chars().last();
                if pattern.starts_with('.')
                    || !matches!(before, Some(c) if c.is_alphanumeric() || c == '_' || c == '.')
                {
                    let rest = &methods[at + pattern.len()..];
                    let handler: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    if !out.iter().any(|(m, h)| *m == method && *h == handler) {
                        out.push((method, handler));
                    }
                }
            }
        }
    }
    out
}

/// The level the handler `name` of a routes file states: its
/// `Authorized<Level>` argument (`Public` when it takes none).
fn handler_level(source: &str, name: &str) -> Level {
    let at = source
        .find(&format!("async fn {name}("))
        .unwrap_or_else(|| panic!("no handler {name}"));
    let signature = &source[at..at + source[at..].find('{').unwrap()];
    match signature
        .split("Authorized<")
        .nth(1)
        .and_then(|s| s.split('>').next())
    {
        Some("ReadOnly") => Level::ReadOnly,
        Some("WriteOnly") => Level::WriteOnly,
        Some("ReadWrite") => Level::ReadWrite,
        Some("Admin") => Level::Admin,
        Some("Public") | None => Level::Public,
        Some(other) => panic!("{name}: level {other}"),
    }
}

/// A path that reaches `template`: each parameter a word.
fn example_path(template: &str) -> String {
    template
        .split('/')
        .map(|segment| match segment {
            "{file}" => "app.js",
            s if s.starts_with("{*") => "k",
            s if s.starts_with('{') => "q",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The roles that meet each level (written out, not derived from the code).
fn meets(role: &str, needed: Level) -> bool {
    match needed {
        Level::Public => true,
        Level::ReadOnly => ["read-only", "read-write", "admin"].contains(&role),
        Level::WriteOnly => ["write-only", "read-write", "admin"].contains(&role),
        Level::ReadWrite => ["read-write", "admin"].contains(&role),
        Level::Admin => role == "admin",
    }
}

/// Each route Queen's broker has needs the level the broker gives it
/// (`access::level`, written out route by route); the others need what
/// their handlers state.
#[test]
fn every_route_needs_the_level_queen_gives_it() {
    let routes = routes();
    for r in &routes {
        if let Some(queen) = level(&r.method.parse().unwrap(), &r.template) {
            assert_eq!(r.needed, queen, "{} {}", r.method, r.template);
        }
    }
    for (method, template) in [
        ("GET", "/api/v1/status"),
        ("DELETE", "/api/v1/dlq"),
        ("GET", "/health"),
    ] {
        assert!(
            routes
                .iter()
                .any(|r| r.method == method && r.template == template),
            "{method} {template} is declared"
        );
    }
    assert_eq!(level(&"PATCH".parse().unwrap(), "/api/v1/push"), None);
}

#[tokio::test]
async fn each_route_takes_exactly_the_roles_of_its_level() {
    let app = hs_front(&[]);
    let routes = routes();
    for role in [
        "",
        "read-only",
        "write-only",
        "read-write",
        "admin",
        "superuser",
    ] {
        let token = hs(claims(role));
        for Route {
            method,
            template,
            path,
            body,
            needed,
        } in &routes
        {
            let answer = send(&app, with_token(method, path, Some(&token), *body)).await;
            if meets(role, *needed) {
                assert!(
                    !matches!(answer.status.as_u16(), 401 | 403),
                    "{method} {template} with role {role:?}: {} {}",
                    answer.status,
                    answer.body
                );
            } else {
                assert_eq!(
                    answer.status,
                    StatusCode::FORBIDDEN,
                    "{method} {template} with role {role:?}"
                );
                if *method != "HEAD" {
                    assert_eq!(answer.body["code"], "forbidden");
                    let error = answer.body["error"].as_str().unwrap();
                    assert!(error.contains(needed.roles()), "{error}");
                }
            }
        }
    }
}

#[tokio::test]
async fn the_token_is_checked_before_the_request_is_read() {
    let app = hs_front(&[]);
    let no_role = hs(claims(""));
    let bad_query = "batch=x&wait=x&limit=x&expect=x&hours=x";
    for Route {
        method,
        template,
        path,
        needed,
        ..
    } in &routes()
    {
        if *needed == Level::Public {
            continue;
        }
        let joint = if path.contains('?') { '&' } else { '?' };
        let uri = format!("{path}{joint}{bad_query}");
        for (token, status) in [
            (None, StatusCode::UNAUTHORIZED),
            (Some(no_role.as_str()), StatusCode::FORBIDDEN),
        ] {
            let mut req = Request::builder()
                .method(method.as_str())
                .uri(&uri)
                .header("content-type", "text/plain");
            if let Some(t) = token {
                req = req.header("authorization", format!("Bearer {t}"));
            }
            let answer = send(&app, req.body(Body::from("{not json")).unwrap()).await;
            assert_eq!(
                answer.status, status,
                "{method} {template}: {}",
                answer.body
            );
        }
    }
    // A path the route refuses (a partition id that is not a number, a
    // segment that is not UTF-8) is refused only after the token.
    for path in ["/api/v1/messages/x/t", "/api/v1/resources/queues/%FF"] {
        let answer = send(&app, with_token("GET", path, None, None)).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(answer.headers["www-authenticate"], "Bearer");
    }
}

#[tokio::test]
async fn roles_may_come_as_an_array() {
    let app = hs_front(&[]);
    let token = hs(json!({"sub": "t", "roles": ["metrics", "read-only"], "exp": now() + 600}));
    assert!(passes(&app, &token).await);
    let push = with_token("POST", "/api/v1/push", Some(&token), Some("{}"));
    assert_eq!(send(&app, push).await.status, StatusCode::FORBIDDEN);
    let token = hs(json!({"sub": "t", "roles": ["write-only", "read-only"], "exp": now() + 600}));
    let push = with_token("POST", "/api/v1/push", Some(&token), Some("{}"));
    assert_ne!(send(&app, push).await.status, StatusCode::FORBIDDEN);
    // A role that is not a string grants nothing.
    let token = hs(json!({"sub": "t", "role": {"name": "admin"}, "exp": now() + 600}));
    assert!(!passes(&app, &token).await);
}

#[tokio::test]
async fn a_missing_or_failed_token_is_a_401_with_a_bearer_challenge() {
    let app = hs_front(&[]);
    let answer = send(
        &app,
        with_token("GET", "/api/v1/resources/queues", None, None),
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.body["code"], "unauthorized");
    assert_eq!(answer.body["success"], false);
    assert_eq!(answer.headers["www-authenticate"], "Bearer");
    let basic = Request::get("/api/v1/resources/queues")
        .header("authorization", "Basic dXNlcjpwYXNz")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, basic).await.status, StatusCode::UNAUTHORIZED);
    let ok = claims("admin");
    let cases: Vec<(String, &str)> = vec![
        ("not.a.token".into(), "malformed"),
        // alg "none", claiming admin.
        (
            "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJtYWxsb3J5Iiwicm9sZSI6ImFkbWluIiwiZXhwIjo0MTAyNDQ0ODAwfQ.".into(),
            "algorithm",
        ),
        (hs_with(Algorithm::HS384, SECRET.as_bytes(), ok.clone()), "HS384"),
        (hs_with(Algorithm::HS256, b"another secret", ok.clone()), "signature"),
        (rs(RS_PRIVATE, ok.clone()), "RS256"),
        (hs(json!({"sub": "t", "role": "admin"})), "no exp claim"),
        (hs(json!({"sub": "t", "role": "admin", "exp": now() - 120})), "expired"),
        (hs(json!({"sub": "t", "role": "admin", "exp": now() + 600, "nbf": now() + 120})), "not valid yet"),
    ];
    for (token, why) in cases {
        let answer = send(
            &app,
            with_token("GET", "/api/v1/resources/queues", Some(&token), None),
        )
        .await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{why}");
        assert_eq!(answer.body["code"], "unauthorized");
        assert!(
            answer.body["error"].as_str().unwrap().contains(why),
            "{why}: {}",
            answer.body
        );
        assert_eq!(
            answer.headers["www-authenticate"],
            "Bearer error=\"invalid_token\""
        );
    }
    // Public routes need no token.
    let answer = send(&app, with_token("GET", "/health", None, None)).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn expiry_is_checked_with_the_configured_leeway() {
    let app = hs_front(&[]);
    let late = |by: i64| hs(json!({"sub": "t", "role": "admin", "exp": now() - by}));
    assert!(passes(&app, &late(10)).await, "within the default 30 s");
    assert!(!passes(&app, &late(45)).await);
    let app = hs_front(&[("QUEEN_JWT_LEEWAY_S", "60")]);
    assert!(passes(&app, &late(45)).await);
    let app = hs_front(&[("QUEEN_JWT_LEEWAY_S", "0")]);
    assert!(!passes(&app, &late(5)).await);
}

#[tokio::test]
async fn issuer_and_audience_are_checked_when_set() {
    let app = hs_front(&[
        ("QUEEN_JWT_ISSUER", "https://idp.example"),
        ("QUEEN_JWT_AUDIENCE", "queen"),
    ]);
    let with = |extra: Value| {
        let mut c = claims("admin");
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        hs(c)
    };
    assert!(
        passes(
            &app,
            &with(json!({"iss": "https://idp.example", "aud": "queen"}))
        )
        .await
    );
    assert!(
        passes(
            &app,
            &with(json!({"iss": "https://idp.example", "aud": ["other", "queen"]}))
        )
        .await
    );
    assert!(!passes(&app, &with(json!({"aud": "queen"}))).await);
    assert!(
        !passes(
            &app,
            &with(json!({"iss": "https://evil.example", "aud": "queen"}))
        )
        .await
    );
    assert!(!passes(&app, &with(json!({"iss": "https://idp.example"}))).await);
    assert!(
        !passes(
            &app,
            &with(json!({"iss": "https://idp.example", "aud": "other"}))
        )
        .await
    );
    // Unset, neither is looked at.
    let app = hs_front(&[]);
    assert!(passes(&app, &with(json!({"iss": "anyone", "aud": "anything"}))).await);
}

#[tokio::test]
async fn rs256_tokens_are_checked_against_the_public_key() {
    let only_rs = app(&[("JWT_PUBLIC_KEY", RS_PUBLIC)]);
    assert!(passes(&only_rs, &rs(RS_PRIVATE, claims("read-only"))).await);
    assert!(!passes(&only_rs, &rs(RS_OTHER_PRIVATE, claims("read-only"))).await);
    assert!(
        !passes(&only_rs, &hs(claims("read-only"))).await,
        "HS256 is not configured"
    );
    // The public key used as an HMAC secret (the algorithm confusion).
    let forged = hs_with(Algorithm::HS256, RS_PUBLIC.as_bytes(), claims("admin"));
    assert!(!passes(&only_rs, &forged).await);
    let both = app(&[("JWT_PUBLIC_KEY", RS_PUBLIC), ("JWT_SECRET", SECRET)]);
    assert!(passes(&both, &rs(RS_PRIVATE, claims("read-only"))).await);
    assert!(passes(&both, &hs(claims("read-only"))).await);
    assert!(!passes(&both, &forged).await);
    // The PEM written on one line with \n, as environments often hold it.
    let one_line = RS_PUBLIC.trim_end().replace('\n', "\\n");
    let from_one_line = app(&[("JWT_PUBLIC_KEY", &one_line)]);
    assert!(passes(&from_one_line, &rs(RS_PRIVATE, claims("read-only"))).await);
}

#[tokio::test]
async fn the_public_key_can_come_from_a_file() {
    let path = std::env::temp_dir().join(format!("queen-front-test-{}.pub", std::process::id()));
    std::fs::write(&path, RS_PUBLIC).unwrap();
    let from_file = app(&[("QUEEN_JWT_PUBLIC_KEY_FILE", path.to_str().unwrap())]);
    assert!(passes(&from_file, &rs(RS_PRIVATE, claims("read-only"))).await);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn key_settings_that_can_not_work_stop_the_start() {
    let lookup = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let config = crate::config::Config::from_lookup;
    let err = config(&lookup(&[
        ("JWT_PUBLIC_KEY", "x"),
        ("QUEEN_JWT_PUBLIC_KEY_FILE", "/x"),
    ]))
    .unwrap_err();
    assert!(err.contains("not both"), "{err}");
    let err = config(&lookup(&[(
        "QUEEN_JWT_PUBLIC_KEY_FILE",
        "/nonexistent/key.pub",
    )]))
    .unwrap_err();
    assert!(err.contains("QUEEN_JWT_PUBLIC_KEY_FILE"), "{err}");
    let err = config(&lookup(&[("QUEEN_JWT_LEEWAY_S", "-1")])).unwrap_err();
    assert!(err.contains("QUEEN_JWT_LEEWAY_S"), "{err}");
    let not_a_key = config(&lookup(&[(
        "JWT_PUBLIC_KEY",
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    )]))
    .unwrap();
    assert!(crate::auth::Auth::new(&not_a_key.jwt).is_err());
}

#[tokio::test]
async fn the_token_subject_is_the_producer_stamped_on_a_push() {
    let pg = FakePg::start(vec![("queen.push_text(", Reply::text(&[TEXT, TEXT], "[]"))]).await;
    let guarded = app(&[("DATABASE_URL", &pg.url()), ("JWT_SECRET", SECRET)]);
    let token = hs(json!({"sub": "billing-service", "role": "write-only", "exp": now() + 600}));
    let body = r#"{"items": [{"queue": "q", "payload": 1, "producerSub": "someone-else"}]}"#;
    let answer = send(
        &guarded,
        with_token("POST", "/api/v1/push", Some(&token), Some(body)),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
    let params = pg.params_of("queen.push_text(").unwrap();
    assert_eq!(params[1].as_deref(), Some(&b"billing-service"[..]));
    // Without authentication there is no producer.
    let pg = FakePg::start(vec![("queen.push_text(", Reply::text(&[TEXT, TEXT], "[]"))]).await;
    let open = app(&[("DATABASE_URL", &pg.url())]);
    let answer = send(
        &open,
        with_token("POST", "/api/v1/push", Some(&token), Some(body)),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED);
    assert_eq!(pg.params_of("queen.push_text(").unwrap()[1], None);
}
