//! Routes. Each is one call to the extension's public SQL API: the JSON body
//! goes through as jsonb, binary bodies as bytea, and the answer comes back
//! as it is. No business logic lives here. The router is built here; the
//! handlers live by area, one module each. Every handler's first argument
//! is the `Authorized<_>` of the level its route needs (`access.rs`), so
//! the token is checked before anything of the request is read; its query
//! parameters come as a struct of its own (`query.rs`), its body by content
//! type (`body.rs`).

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
use axum::routing::{get, post};
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
/// no layer.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(page_routes())
        .merge(message_routes())
        .merge(status_routes())
        .merge(resource_routes())
        .merge(kv_timer_routes())
        .merge(group_routes())
        .merge(system_routes())
        .merge(stream_routes())
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .with_state(state)
}

/// The dashboard and the health check.
fn page_routes() -> Router<AppState> {
    Router::new()
        .route("/", get(crate::dashboard::page))
        .route("/dashboard/{file}", get(crate::dashboard::asset))
        .route("/health", get(status::health))
}

/// The message path: configure, push, pop, ack, transactions, leases.
fn message_routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/configure", post(queues::configure))
        .route("/api/v1/push", post(messages::push))
        .route("/api/v1/pop", get(messages::pop_filtered))
        .route("/api/v1/pop/queue/{queue}", get(messages::pop_queue))
        .route(
            "/api/v1/pop/queue/{queue}/partition/{partition}",
            get(messages::pop_partition),
        )
        .route("/api/v1/ack", post(messages::ack))
        .route("/api/v1/ack/batch", post(messages::ack))
        .route("/api/v1/transaction", post(messages::transaction))
        .route("/api/v1/lease/{lease}/extend", post(messages::extend_lease))
}

/// Status, analytics and metrics.
fn status_routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/status", get(status::status))
        .route("/api/v1/status/queues", get(status::status_queues))
        .route("/api/v1/status/queues/{queue}", get(status::status_queue))
        .route("/api/v1/status/analytics", get(status::status_analytics))
        .route("/api/v1/stats/refresh", post(status::stats_refresh))
        .route(
            "/api/v1/analytics/system-metrics",
            get(status::system_metrics),
        )
        .route(
            "/api/v1/analytics/worker-metrics",
            get(status::worker_metrics),
        )
        .route("/api/v1/analytics/queue-lag", get(status::queue_lag))
        .route("/api/v1/analytics/queue-ops", get(status::queue_ops))
        .route("/metrics", get(status::metrics))
        .route(
            "/api/v1/analytics/retention",
            get(status::retention_analytics),
        )
        .route(
            "/api/v1/analytics/postgres-stats",
            get(status::postgres_stats),
        )
        .route("/metrics/prometheus", get(status::prometheus))
}

/// Resources, reads by offset, dead letters, messages and traces.
fn resource_routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/resources/overview", get(status::overview))
        .route("/api/v1/resources/queues", get(resources::queues))
        .route(
            "/api/v1/resources/queues/{queue}",
            get(resources::queue).delete(queues::delete_queue),
        )
        .route(
            "/api/v1/resources/queues/{queue}/depth",
            get(resources::depth),
        )
        .route(
            "/api/v1/resources/queues/{queue}/retention",
            get(resources::retention),
        )
        .route(
            "/api/v1/resources/queues/{queue}/counts",
            get(resources::counts),
        )
        .route("/api/v1/resources/sweeper", get(resources::sweeper))
        .route("/api/v1/resources/maintenance", get(resources::maintenance))
        .route("/api/v1/resources/kv/usage", get(resources::kv_usage))
        .route("/api/v1/resources/namespaces", get(resources::namespaces))
        .route("/api/v1/resources/tasks", get(resources::tasks))
        .route("/api/v1/resources/partitions", get(resources::partitions))
        .route(
            "/api/v1/resources/kv/namespaces",
            get(resources::kv_namespaces),
        )
        .route("/api/v1/resources/kv/list", post(resources::kv_list))
        .route("/api/v1/fetch", post(resources::fetch))
        .route(
            "/api/v1/partitions/changed",
            post(resources::partitions_changed),
        )
        .route("/api/v1/dlq", get(dlq::dlq).delete(dlq::purge))
        .route("/api/v1/dlq/{id}/replay", post(dlq::replay))
        .route(
            "/api/v1/messages/{partition_id}/{transaction_id}",
            get(inspect::get).delete(inspect::delete),
        )
        .route("/api/v1/messages", get(inspect::list))
        .route("/api/v1/traces", post(traces::record))
        .route("/api/v1/traces/names", get(traces::names))
        .route("/api/v1/traces/by-name/{name}", get(traces::by_name))
        .route(
            "/api/v1/traces/{partition_id}/{transaction_id}",
            get(traces::for_message),
        )
        .route(
            "/api/v1/messages/{partition_id}/{transaction_id}/retry",
            post(dlq::retry_message),
        )
}

/// Timers, KV and locks.
fn kv_timer_routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/timers", post(timers::timers))
        .route("/api/v1/kv", post(kv::kv))
        .route(
            "/api/v1/kv/{ns}/{*key}",
            get(kv::kv_get).put(kv::kv_put).delete(kv::kv_delete),
        )
        .route("/api/v1/locks", post(kv::locks))
        .route("/api/v1/timers/{queue}", get(timers::list_timers))
        .route(
            "/api/v1/timers/{queue}/{*timer_key}",
            get(timers::peek_timer).delete(timers::cancel_timer),
        )
}

/// Consumer groups.
fn group_routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/consumer-groups",
            get(consumer_groups::consumer_groups),
        )
        // Static segments: matched before `{group}`.
        .route(
            "/api/v1/consumer-groups/lagging",
            get(consumer_groups::lagging),
        )
        .route(
            "/api/v1/consumer-groups/positions",
            post(consumer_groups::positions),
        )
        .route(
            "/api/v1/consumer-groups/{group}",
            get(consumer_groups::consumer_group).delete(consumer_groups::delete_consumer_group),
        )
        .route(
            "/api/v1/consumer-groups/{group}/queues/{queue}",
            axum::routing::delete(consumer_groups::delete_consumer_group_on_queue),
        )
        .route(
            "/api/v1/consumer-groups/{group}/queues/{queue}/seek",
            post(consumer_groups::seek_consumer_group),
        )
        .route(
            "/api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek",
            post(consumer_groups::seek_partition),
        )
        .route(
            "/api/v1/consumer-groups/{group}/subscription",
            post(consumer_groups::consumer_group_subscription),
        )
}

/// The switches and ephemeral queues.
fn system_routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/system/maintenance",
            get(system::maintenance).post(system::set_maintenance),
        )
        .route(
            "/api/v1/system/maintenance/pop",
            get(system::pop_maintenance).post(system::set_pop_maintenance),
        )
        .route(
            "/api/v1/system/kv-timers",
            get(system::kv_timers).post(system::set_kv_timers),
        )
        .route(
            "/api/v1/system/ephemeral",
            get(system::ephemeral).post(system::set_ephemeral),
        )
        .route("/api/v1/ephemeral/configure", post(ephemeral::configure))
        .route("/api/v1/ephemeral/reset", post(ephemeral::reset))
        .route(
            "/api/v1/ephemeral/queue/{queue}",
            axum::routing::delete(ephemeral::delete),
        )
        .route("/api/v1/ephemeral/push", post(ephemeral::push))
        .route("/api/v1/ephemeral/pop", get(ephemeral::pop))
        .route("/api/v1/ephemeral/ack", post(ephemeral::ack))
        .route("/api/v1/ephemeral/queues", get(ephemeral::queues))
        .route(
            "/api/v1/ephemeral/queues/{queue}/depth",
            get(ephemeral::depth),
        )
}

/// Streaming queries.
fn stream_routes() -> Router<AppState> {
    Router::new()
        .route("/streams/v1/queries", post(streams::register))
        .route("/streams/v1/state/get", post(streams::state_get))
        .route("/streams/v1/cycle", post(streams::cycle))
        .route("/api/v1/resources/streams", get(streams::list))
        .route(
            "/api/v1/resources/streams/{name}",
            axum::routing::delete(streams::delete),
        )
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
