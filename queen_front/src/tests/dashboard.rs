//! The dashboard's page and assets, as the front-end serves them.

use axum::body::Body;
use axum::http::{Request, StatusCode};

use super::{app, send, UNREACHABLE};

fn get(uri: &str) -> Request<Body> {
    Request::builder().uri(uri).body(Body::empty()).unwrap()
}

/// The asset names the page refers to (`/dashboard/...`).
fn referred(page: &str) -> Vec<String> {
    page.split("/dashboard/")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_page_and_the_assets_it_names_are_served_without_a_token() {
    // With JWT on: the page holds no data, and asks for the token itself.
    let app = app(&[("DATABASE_URL", UNREACHABLE), ("JWT_SECRET", "s")]);
    let page = send(&app, get("/")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(page.headers["cache-control"], "no-cache");
    let policy = page.headers["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    let html = page.body.as_str().expect("the page is not JSON");
    let names = referred(html);
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("app-") && n.ends_with(".js")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.ends_with(".css")), "{names:?}");
    for name in names {
        let asset = send(&app, get(&format!("/dashboard/{name}"))).await;
        assert_eq!(asset.status, StatusCode::OK, "{name}");
        let kind = if name.ends_with(".js") {
            "text/javascript"
        } else {
            "text/css"
        };
        assert_eq!(asset.headers["content-type"], kind);
        assert!(asset.headers["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable"));
        assert_eq!(asset.headers["x-content-type-options"], "nosniff");
        assert!(
            asset.body.as_str().is_some_and(|b| b.len() > 1000),
            "{name}"
        );
    }
}

#[tokio::test]
async fn an_unknown_asset_and_a_dashboard_turned_off_answer_as_unknown_routes() {
    let app = app(&[("DATABASE_URL", UNREACHABLE)]);
    for uri in [
        "/dashboard/app.js",
        "/dashboard/../Cargo.toml",
        "/dashboard/x",
    ] {
        let answer = send(&app, get(uri)).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{uri}");
        assert_eq!(answer.body["code"], "no_such_route", "{uri}");
    }
    let off = super::app(&[("DATABASE_URL", UNREACHABLE), ("QUEEN_DASHBOARD", "off")]);
    let on = send(&app, get("/")).await;
    let names = referred(on.body.as_str().unwrap());
    let answer = send(&off, get("/")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.body["code"], "no_such_route");
    let answer = send(&off, get(&format!("/dashboard/{}", names[0]))).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
}
