//! Routes. Each is one call to the extension's public SQL API: the JSON body
//! goes through as jsonb, binary bodies as bytea, and the answer comes back
//! as it is. No business logic lives here. The handlers live by area, one
//! module each, with the routes that call them; the router merges them.
//! Every handler's first argument is the `Authorized<_>` of the level its
//! route needs (`access.rs`), so the token is checked before anything of
//! the request is read; its query parameters come as a struct of its own
//! (`query.rs`), its body by content type (`body.rs`).

mod call;
mod consumer_groups;
mod dlq;
mod ephemeral;
mod inspect;
mod kv;
mod messages;
mod queues;
mod resources;
mod status;
mod streams;
mod system;
mod timers;
mod traces;

use axum::extract::DefaultBodyLimit;
use axum::http::{Method, StatusCode, Uri};
use axum::routing::get;
use axum::Router;

use crate::error::ApiError;
use crate::state::AppState;

/// The routes behind every layer the front-end serves them with (all but
/// the request trace).
pub fn app(state: AppState) -> Router {
    let config = std::sync::Arc::clone(&state.config);
    with_layers(router(state), &config)
}

/// The layers around the routes, outermost first: a panic's answer, the body
/// limit, JSON for the HTTP layer's own refusals, the browser guard.
pub fn with_layers(routes: Router, config: &crate::config::Config) -> Router {
    let limit = config.body_limit_bytes;
    routes
        .layer(axum::middleware::from_fn_with_state(
            config.cors_origins.clone(),
            crate::cors::guard,
        ))
        .layer(axum::middleware::from_fn_with_state(
            limit,
            crate::error::json_refusals,
        ))
        .layer(DefaultBodyLimit::max(limit))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            crate::error::panic_answer,
        ))
}

/// The routes with their handlers and state, the JSON 404 and 405 answers;
/// no layer. Each area declares its routes beside their handlers.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(crate::dashboard::page))
        .route("/dashboard/{file}", get(crate::dashboard::asset))
        .merge(status::routes())
        .merge(queues::routes())
        .merge(messages::routes())
        .merge(resources::routes())
        .merge(dlq::routes())
        .merge(inspect::routes())
        .merge(traces::routes())
        .merge(timers::routes())
        .merge(kv::routes())
        .merge(consumer_groups::routes())
        .merge(system::routes())
        .merge(ephemeral::routes())
        .merge(streams::routes())
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .with_state(state)
}

async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::unknown_route(&method, &uri)
}

/// A known path asked with a method it does not serve (the answer keeps
/// its `Allow` header).
async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} does not serve {method}", uri.path()),
    )
}
