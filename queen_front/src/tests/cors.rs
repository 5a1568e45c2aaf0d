//! CORS for listed origins, and the guard against cross-site writes.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::json;

use super::fakepg::{FakePg, Reply, JSONB, TEXT};
use super::{app, send};
use crate::cors::Origins;

const ALLOWED: &str = "https://console.example";
const EVIL: &str = "http://evil.example";

fn request(method: &str, uri: &str, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut req = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.body(Body::from(body.to_owned())).unwrap()
}

async fn front() -> (FakePg, axum::Router) {
    let pg = FakePg::start(vec![(
        "queen.configure(",
        Reply::json(&[TEXT, JSONB, TEXT], json!({"configured": true})),
    )])
    .await;
    let app = app(&[
        ("DATABASE_URL", &pg.url()),
        (
            "QUEEN_CORS_ORIGINS",
            &format!("http://localhost:5173, {ALLOWED}"),
        ),
    ]);
    (pg, app)
}

const CONFIGURE: &str = r#"{"queue": "orders", "options": {"leaseTime": 1}}"#;

#[tokio::test]
async fn a_preflight_from_a_listed_origin_is_answered_and_any_other_refused() {
    let (pg, app) = front().await;
    let preflight = |origin: &'static str| {
        request(
            "OPTIONS",
            "/api/v1/push",
            &[
                ("origin", origin),
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "content-type, authorization",
                ),
            ],
            "",
        )
    };
    let answer = send(&app, preflight(ALLOWED)).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    let h = &answer.headers;
    assert_eq!(h["access-control-allow-origin"], ALLOWED);
    assert!(h["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("POST"));
    let allowed_headers = h["access-control-allow-headers"].to_str().unwrap();
    assert!(allowed_headers.contains("content-type") && allowed_headers.contains("authorization"));
    assert!(h.contains_key("access-control-max-age"));
    let answer = send(&app, preflight(EVIL)).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.body["code"], "forbidden");
    assert!(!answer.headers.contains_key("access-control-allow-origin"));
    assert!(pg.keys().is_empty());
}

#[tokio::test]
async fn a_write_from_an_unlisted_origin_never_reaches_its_handler() {
    let (pg, app) = front().await;
    // The form a page elsewhere can send without a preflight.
    for content_type in ["text/plain", "application/json"] {
        let headers = [("origin", EVIL), ("content-type", content_type)];
        let answer = send(
            &app,
            request("POST", "/api/v1/configure", &headers, CONFIGURE),
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{content_type}");
        assert_eq!(answer.body["success"], false);
        assert_eq!(answer.body["code"], "forbidden");
    }
    for (method, uri) in [
        ("DELETE", "/api/v1/resources/queues/orders"),
        ("PUT", "/api/v1/kv/ns/key"),
        ("PATCH", "/api/v1/configure"),
        ("POST", "/api/v1/messages/1/t/retry"),
        // A pop is a GET that takes a lease (and with autoAck consumes).
        ("GET", "/api/v1/pop/queue/orders?autoAck=true"),
        // So is an ephemeral queue's, which also registers its group.
        (
            "GET",
            "/api/v1/ephemeral/pop?queue=orders&autoAck=true&group=g",
        ),
    ] {
        for origin in [EVIL, "null", "https://console.example.evil.example"] {
            let answer = send(&app, request(method, uri, &[("origin", origin)], "")).await;
            assert_eq!(
                answer.status,
                StatusCode::FORBIDDEN,
                "{method} {uri} from {origin}"
            );
        }
    }
    // A cross-site fetch that sends no Origin at all.
    let headers = [
        ("sec-fetch-site", "cross-site"),
        ("content-type", "text/plain"),
    ];
    let answer = send(
        &app,
        request("POST", "/api/v1/configure", &headers, CONFIGURE),
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    for uri in [
        "/api/v1/pop/queue/orders?autoAck=true",
        "/api/v1/ephemeral/pop?queue=orders&autoAck=true",
    ] {
        let answer = send(&app, request("GET", uri, &headers, "")).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{uri}");
    }
    assert!(pg.keys().is_empty(), "nothing reached the database");
}

#[tokio::test]
async fn a_write_from_a_listed_origin_or_without_one_is_served() {
    let (pg, app) = front().await;
    let json = ("content-type", "application/json");
    let answer = send(
        &app,
        request(
            "POST",
            "/api/v1/configure",
            &[("origin", ALLOWED), json],
            CONFIGURE,
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.headers["access-control-allow-origin"], ALLOWED);
    assert_eq!(answer.headers["vary"], "origin");
    // Origins compare without regard to case, as hosts do.
    let answer = send(
        &app,
        request(
            "POST",
            "/api/v1/configure",
            &[("origin", "HTTPS://Console.Example"), json],
            CONFIGURE,
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    // A listed origin may say cross-site: it is allowed to be.
    let headers = [("origin", ALLOWED), ("sec-fetch-site", "cross-site"), json];
    let answer = send(
        &app,
        request("POST", "/api/v1/configure", &headers, CONFIGURE),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    // curl and the clients send no Origin.
    let answer = send(
        &app,
        request("POST", "/api/v1/configure", &[json], CONFIGURE),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(!answer.headers.contains_key("access-control-allow-origin"));
    assert_eq!(pg.keys().len(), 1);
}

#[tokio::test]
async fn a_read_from_an_unlisted_origin_is_served_without_allow_headers() {
    let (_pg, app) = front().await;
    let answer = send(
        &app,
        request("GET", "/api/v1/nothing", &[("origin", EVIL)], ""),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let answer = send(&app, request("GET", "/health", &[("origin", EVIL)], "")).await;
    assert_ne!(answer.status, StatusCode::FORBIDDEN);
    assert!(!answer.headers.contains_key("access-control-allow-origin"));
    let answer = send(&app, request("GET", "/health", &[("origin", ALLOWED)], "")).await;
    assert_eq!(answer.headers["access-control-allow-origin"], ALLOWED);
}

#[tokio::test]
async fn no_origin_is_allowed_unless_listed() {
    let app = app(&[]);
    let headers = [
        ("origin", "http://127.0.0.1:6632"),
        ("content-type", "application/json"),
    ];
    let answer = send(
        &app,
        request("POST", "/api/v1/configure", &headers, CONFIGURE),
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
}

#[test]
fn the_origin_list_takes_exact_origins_only() {
    let origins =
        Origins::parse(" https://a.example , http://localhost:5173,,http://[::1]:8080").unwrap();
    assert!(!origins.is_empty());
    assert!(Origins::parse("").unwrap().is_empty());
    for bad in [
        "*",
        "https://a.example/",
        "https://a.example/app",
        "a.example",
        "ftp://a.example",
        "null",
        "https://*.example",
        "https://",
    ] {
        let err = Origins::parse(&format!("https://ok.example,{bad}")).unwrap_err();
        assert!(err.contains("QUEEN_CORS_ORIGINS"), "{bad}: {err}");
    }
    // And a bad list stops the start.
    let err = crate::config::Config::from_lookup(&|n| {
        (n == "QUEEN_CORS_ORIGINS").then(|| "*".to_owned())
    })
    .unwrap_err();
    assert!(err.contains("not accepted"), "{err}");
}

#[tokio::test]
async fn the_dashboard_page_served_here_may_write_when_its_host_is_an_address() {
    let (pg, app) = front().await;
    let json = ("content-type", "application/json");
    // A page loaded from this front-end by IP address or as localhost: its
    // Origin is the Host it sends to.
    for (origin, host) in [
        ("http://127.0.0.1:6632", "127.0.0.1:6632"),
        ("http://localhost:6632", "localhost:6632"),
        ("http://[::1]:6632", "[::1]:6632"),
        ("https://10.1.2.3", "10.1.2.3"),
    ] {
        let headers = [("origin", origin), ("host", host), json];
        let answer = send(
            &app,
            request("POST", "/api/v1/configure", &headers, CONFIGURE),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{origin}: {}", answer.body);
    }
    assert_eq!(pg.executed("queen.configure("), 4);
    // A DNS name is not enough (a page elsewhere can make its name resolve
    // here); nor an Origin that is not the Host sent to.
    for (origin, host) in [
        ("http://evil.example:6632", "evil.example:6632"),
        ("http://127.0.0.1:6632", "127.0.0.1:6633"),
        ("http://127.0.0.1:6632", "evil.example"),
        ("http://127.0.0.1.evil.example", "127.0.0.1.evil.example"),
        ("null", "null"),
    ] {
        let headers = [("origin", origin), ("host", host), json];
        let answer = send(
            &app,
            request("POST", "/api/v1/configure", &headers, CONFIGURE),
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{origin} to {host}");
    }
    assert_eq!(
        pg.executed("queen.configure("),
        4,
        "nothing more reached the database"
    );
}

#[tokio::test]
async fn without_authentication_only_an_address_localhost_or_a_listed_host_is_answered() {
    let (pg, app) = front().await;
    // A page elsewhere whose name was made to resolve to 127.0.0.1 sends
    // its own name as Host, on a read as on a write, with no Origin on a
    // same-origin GET.
    for host in [
        "evil.example:6632",
        "evil.example",
        "127.0.0.1.evil.example",
        "localhost.evil",
    ] {
        for (method, uri) in [
            ("GET", "/api/v1/resources/queues"),
            ("POST", "/api/v1/configure"),
        ] {
            let headers = [("host", host), ("content-type", "application/json")];
            let answer = send(&app, request(method, uri, &headers, CONFIGURE)).await;
            assert_eq!(
                answer.status,
                StatusCode::FORBIDDEN,
                "{method} {uri} for {host}"
            );
            assert!(
                answer.body["error"].as_str().unwrap().contains(host),
                "{}",
                answer.body
            );
        }
    }
    assert_eq!(pg.executed("queen.configure("), 0);
    for host in [
        "127.0.0.1:6632",
        "localhost:6632",
        "LOCALHOST",
        "[::1]:6632",
        "console.example",
    ] {
        let headers = [("host", host), ("content-type", "application/json")];
        let answer = send(
            &app,
            request("POST", "/api/v1/configure", &headers, CONFIGURE),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{host}: {}", answer.body);
    }
    // With tokens checked, a name is no way in: any Host is served.
    let url = pg.url();
    let checked = super::app(&[("DATABASE_URL", url.as_str()), ("JWT_SECRET", "s")]);
    let answer = send(
        &checked,
        request(
            "GET",
            "/api/v1/resources/queues",
            &[("host", "queen.internal")],
            "",
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}
