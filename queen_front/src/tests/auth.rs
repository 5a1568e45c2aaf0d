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

/// Every route the router declares, with an example path, a body when it
/// takes one, and the level it needs.
const ROUTES: &[(&str, &str, &str, Option<&str>, Level)] = {
    use Level::*;
    const B: Option<&str> =
        Some(r#"{"queue": "q", "subscriptionTimestamp": "2026-01-01T00:00:00Z"}"#);
    &[
        ("GET", "/", "/", None, Public),
        (
            "GET",
            "/dashboard/{file}",
            "/dashboard/app.js",
            None,
            Public,
        ),
        ("GET", "/health", "/health", None, Public),
        (
            "GET",
            "/metrics/prometheus",
            "/metrics/prometheus",
            None,
            ReadOnly,
        ),
        ("GET", "/api/v1/status", "/api/v1/status", None, ReadOnly),
        ("GET", "/metrics", "/metrics", None, ReadOnly),
        (
            "GET",
            "/api/v1/status/queues",
            "/api/v1/status/queues",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/status/queues/{queue}",
            "/api/v1/status/queues/q",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/status/analytics",
            "/api/v1/status/analytics",
            None,
            ReadOnly,
        ),
        (
            "POST",
            "/api/v1/stats/refresh",
            "/api/v1/stats/refresh",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/analytics/system-metrics",
            "/api/v1/analytics/system-metrics",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/analytics/worker-metrics",
            "/api/v1/analytics/worker-metrics",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/analytics/queue-lag",
            "/api/v1/analytics/queue-lag",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/analytics/queue-ops",
            "/api/v1/analytics/queue-ops",
            None,
            ReadOnly,
        ),
        ("HEAD", "/api/v1/status", "/api/v1/status", None, ReadOnly),
        (
            "GET",
            "/api/v1/resources/overview",
            "/api/v1/resources/overview",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/queues",
            "/api/v1/resources/queues",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/queues/{queue}",
            "/api/v1/resources/queues/q",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/queues/{queue}/depth",
            "/api/v1/resources/queues/q/depth?group=g",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/queues/{queue}/retention",
            "/api/v1/resources/queues/q/retention",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/queues/{queue}/counts",
            "/api/v1/resources/queues/q/counts",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/sweeper",
            "/api/v1/resources/sweeper",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/maintenance",
            "/api/v1/resources/maintenance",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/kv/usage",
            "/api/v1/resources/kv/usage",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/namespaces",
            "/api/v1/resources/namespaces",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/tasks",
            "/api/v1/resources/tasks",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/partitions",
            "/api/v1/resources/partitions?queue=q&limit=5",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/timers/{queue}",
            "/api/v1/timers/q?after=a&limit=2",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/timers/{queue}/{*timer_key}",
            "/api/v1/timers/q/a/b",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/resources/kv/namespaces",
            "/api/v1/resources/kv/namespaces",
            None,
            ReadOnly,
        ),
        (
            "POST",
            "/api/v1/resources/kv/list",
            "/api/v1/resources/kv/list",
            B,
            ReadOnly,
        ),
        ("POST", "/api/v1/fetch", "/api/v1/fetch", B, ReadOnly),
        (
            "POST",
            "/api/v1/partitions/changed",
            "/api/v1/partitions/changed",
            B,
            ReadOnly,
        ),
        ("GET", "/api/v1/dlq", "/api/v1/dlq?queue=q", None, ReadOnly),
        (
            "GET",
            "/api/v1/messages/{partition_id}/{transaction_id}",
            "/api/v1/messages/1/t",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/messages",
            "/api/v1/messages",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/traces/names",
            "/api/v1/traces/names",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/traces/by-name/{name}",
            "/api/v1/traces/by-name/n",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/traces/{partition_id}/{transaction_id}",
            "/api/v1/traces/1/t",
            None,
            ReadOnly,
        ),
        ("POST", "/api/v1/traces", "/api/v1/traces", B, ReadWrite),
        (
            "GET",
            "/api/v1/kv/{ns}/{*key}",
            "/api/v1/kv/ns/a/b",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/consumer-groups",
            "/api/v1/consumer-groups",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/consumer-groups/lagging",
            "/api/v1/consumer-groups/lagging?minLagSeconds=60",
            None,
            ReadOnly,
        ),
        (
            "POST",
            "/api/v1/consumer-groups/positions",
            "/api/v1/consumer-groups/positions",
            Some(r#"{"consumerGroup": "g"}"#),
            ReadOnly,
        ),
        (
            "POST",
            "/api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek",
            "/api/v1/consumer-groups/g/queues/q/partitions/p/seek",
            None,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/dlq/{id}/replay",
            "/api/v1/dlq/1/replay",
            None,
            ReadWrite,
        ),
        ("DELETE", "/api/v1/dlq", "/api/v1/dlq?queue=q", None, Admin),
        (
            "GET",
            "/api/v1/consumer-groups/{group}",
            "/api/v1/consumer-groups/g",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/analytics/retention",
            "/api/v1/analytics/retention",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/analytics/postgres-stats",
            "/api/v1/analytics/postgres-stats",
            None,
            ReadOnly,
        ),
        ("POST", "/api/v1/push", "/api/v1/push", B, WriteOnly),
        ("POST", "/api/v1/timers", "/api/v1/timers", B, WriteOnly),
        (
            "GET",
            "/api/v1/pop",
            "/api/v1/pop?namespace=n",
            None,
            ReadWrite,
        ),
        (
            "GET",
            "/api/v1/pop/queue/{queue}",
            "/api/v1/pop/queue/q",
            None,
            ReadWrite,
        ),
        (
            "GET",
            "/api/v1/pop/queue/{queue}/partition/{partition}",
            "/api/v1/pop/queue/q/partition/p",
            None,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/configure",
            "/api/v1/configure",
            B,
            ReadWrite,
        ),
        ("POST", "/api/v1/ack", "/api/v1/ack", B, ReadWrite),
        (
            "POST",
            "/api/v1/ack/batch",
            "/api/v1/ack/batch",
            B,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/transaction",
            "/api/v1/transaction",
            B,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/lease/{lease}/extend",
            "/api/v1/lease/l-1/extend",
            B,
            ReadWrite,
        ),
        ("POST", "/api/v1/kv", "/api/v1/kv", B, ReadWrite),
        (
            "PUT",
            "/api/v1/kv/{ns}/{*key}",
            "/api/v1/kv/ns/a/b",
            B,
            ReadWrite,
        ),
        (
            "DELETE",
            "/api/v1/kv/{ns}/{*key}",
            "/api/v1/kv/ns/a/b",
            None,
            ReadWrite,
        ),
        ("POST", "/api/v1/locks", "/api/v1/locks", B, ReadWrite),
        (
            "DELETE",
            "/api/v1/timers/{queue}/{*timer_key}",
            "/api/v1/timers/q/k",
            None,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/messages/{partition_id}/{transaction_id}/retry",
            "/api/v1/messages/1/t/retry",
            None,
            ReadWrite,
        ),
        (
            "DELETE",
            "/api/v1/messages/{partition_id}/{transaction_id}",
            "/api/v1/messages/1/t",
            None,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/consumer-groups/{group}/queues/{queue}/seek",
            "/api/v1/consumer-groups/g/queues/q/seek",
            B,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/consumer-groups/{group}/subscription",
            "/api/v1/consumer-groups/g/subscription",
            B,
            ReadWrite,
        ),
        (
            "DELETE",
            "/api/v1/resources/queues/{queue}",
            "/api/v1/resources/queues/q",
            None,
            Admin,
        ),
        (
            "DELETE",
            "/api/v1/consumer-groups/{group}",
            "/api/v1/consumer-groups/g",
            None,
            Admin,
        ),
        (
            "DELETE",
            "/api/v1/consumer-groups/{group}/queues/{queue}",
            "/api/v1/consumer-groups/g/queues/q",
            None,
            Admin,
        ),
        (
            "GET",
            "/api/v1/system/maintenance",
            "/api/v1/system/maintenance",
            None,
            Admin,
        ),
        (
            "POST",
            "/api/v1/system/maintenance",
            "/api/v1/system/maintenance",
            B,
            Admin,
        ),
        (
            "GET",
            "/api/v1/system/maintenance/pop",
            "/api/v1/system/maintenance/pop",
            None,
            Admin,
        ),
        (
            "POST",
            "/api/v1/system/maintenance/pop",
            "/api/v1/system/maintenance/pop",
            B,
            Admin,
        ),
        (
            "GET",
            "/api/v1/system/kv-timers",
            "/api/v1/system/kv-timers",
            None,
            Admin,
        ),
        (
            "POST",
            "/api/v1/system/kv-timers",
            "/api/v1/system/kv-timers",
            B,
            Admin,
        ),
        (
            "GET",
            "/api/v1/system/ephemeral",
            "/api/v1/system/ephemeral",
            None,
            Admin,
        ),
        (
            "POST",
            "/api/v1/system/ephemeral",
            "/api/v1/system/ephemeral",
            B,
            Admin,
        ),
        (
            "POST",
            "/api/v1/ephemeral/configure",
            "/api/v1/ephemeral/configure",
            B,
            Admin,
        ),
        (
            "POST",
            "/api/v1/ephemeral/reset",
            "/api/v1/ephemeral/reset",
            B,
            Admin,
        ),
        (
            "DELETE",
            "/api/v1/ephemeral/queue/{queue}",
            "/api/v1/ephemeral/queue/q",
            None,
            Admin,
        ),
        (
            "POST",
            "/api/v1/ephemeral/push",
            "/api/v1/ephemeral/push",
            B,
            WriteOnly,
        ),
        (
            "GET",
            "/api/v1/ephemeral/pop",
            "/api/v1/ephemeral/pop?queue=q",
            None,
            ReadWrite,
        ),
        (
            "POST",
            "/api/v1/ephemeral/ack",
            "/api/v1/ephemeral/ack",
            B,
            ReadWrite,
        ),
        (
            "GET",
            "/api/v1/ephemeral/queues",
            "/api/v1/ephemeral/queues",
            None,
            ReadOnly,
        ),
        (
            "GET",
            "/api/v1/ephemeral/queues/{queue}/depth",
            "/api/v1/ephemeral/queues/q/depth",
            None,
            ReadOnly,
        ),
        (
            "POST",
            "/streams/v1/queries",
            "/streams/v1/queries",
            B,
            ReadWrite,
        ),
        (
            "POST",
            "/streams/v1/state/get",
            "/streams/v1/state/get",
            B,
            ReadOnly,
        ),
        (
            "POST",
            "/streams/v1/cycle",
            "/streams/v1/cycle",
            B,
            ReadWrite,
        ),
        (
            "GET",
            "/api/v1/resources/streams",
            "/api/v1/resources/streams",
            None,
            ReadOnly,
        ),
        (
            "DELETE",
            "/api/v1/resources/streams/{name}",
            "/api/v1/resources/streams/q",
            None,
            Admin,
        ),
    ]
};

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

#[test]
fn every_declared_route_is_in_the_table_of_levels() {
    // The templates the routes' files declare, read from their source.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/routes");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let source: String = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mut declared: Vec<&str> = source
        .split(".route(")
        .skip(1)
        .filter_map(|rest| rest.trim_start().strip_prefix('"'))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    declared.sort_unstable();
    declared.dedup();
    let mut listed: Vec<&str> = ROUTES.iter().map(|r| r.1).collect();
    listed.sort_unstable();
    listed.dedup();
    assert_eq!(declared, listed);
    for (method, template, _, _, needed) in ROUTES {
        assert_eq!(
            level(&method.parse().unwrap(), template),
            *needed,
            "{method} {template}"
        );
    }
    // Anything not in the table needs the highest level.
    assert_eq!(
        level(&"PATCH".parse().unwrap(), "/api/v1/push"),
        Level::Admin
    );
    assert_eq!(
        level(&"POST".parse().unwrap(), "/api/v1/system/anything"),
        Level::Admin
    );
}

#[tokio::test]
async fn each_route_takes_exactly_the_roles_of_its_level() {
    let app = hs_front(&[]);
    for role in [
        "",
        "read-only",
        "write-only",
        "read-write",
        "admin",
        "superuser",
    ] {
        let token = hs(claims(role));
        for (method, template, path, body, needed) in ROUTES {
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
    for (method, template, path, _, needed) in ROUTES {
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
                .method(*method)
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
