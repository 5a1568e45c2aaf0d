//! The status and analytics readers, in the shapes Queen's server answers:
//! each takes the route's query parameters as one JSON object (`from`,
//! `to`, `queue`, `namespace`, `task`, and what the route adds) and answers
//! JSON that queen_front passes through.

use pgrx::prelude::*;

use crate::maintenance::metrics::params::Params;
use crate::pg::spi;
use crate::reads::{series, status};
use crate::wire::datum::{JsonOut, JsonbArg};

fn parse_params(p: Option<JsonbArg>) -> Params {
    Params::parse(p.as_ref().map(|JsonbArg(t)| t.as_str()))
}

/// `GET /api/v1/status`: throughput series, live message counts, leases,
/// dead letters and workers over `from`..`to`.
#[pg_extern]
fn status(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| status::status(c, &p)))
}

/// Deprecated (0.13.0; removed in 0.14.0): `queues_list`, whose answer the front-end turns into Queen's.
/// `GET /api/v1/status/queues`: each queue's live counts, newest first.
#[pg_extern]
fn status_queues(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| status::status_queues(c, &p)))
}

/// Deprecated (0.13.0; removed in 0.14.0): `queue_get`, whose answer the front-end turns into Queen's.
/// `GET /api/v1/status/queues/:queue`: a queue, its configuration and its
/// partitions' live counts; 42704 when the queue is unknown.
#[pg_extern]
fn status_queue(queue: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| status::status_queue(c, queue)))
}

/// `GET /api/v1/status/analytics`: messages pushed per interval.
#[pg_extern]
fn status_analytics(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| series::analytics(c, &p)))
}

/// Deprecated (0.13.0; removed in 0.14.0): `overview`, whose answer the
/// front-end turns into Queen's. `GET /api/v1/resources/overview` in
/// Queen's shape.
#[pg_extern]
fn system_overview() -> JsonOut {
    JsonOut::of(&spi::spi(status::queen_overview))
}

/// `GET /api/v1/analytics/system-metrics`: the database servers' samples.
#[pg_extern]
fn system_metrics_series(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| series::system_metrics(c, &p)))
}

/// `GET /api/v1/analytics/worker-metrics`: the server-wide series.
#[pg_extern]
fn worker_metrics_series(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| series::worker_metrics(c, &p)))
}

/// `GET /api/v1/analytics/queue-lag`: per bucket and queue, the lag pops saw.
#[pg_extern]
fn queue_lag(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| series::queue_lag(c, &p)))
}

/// `GET /api/v1/analytics/queue-ops`: per bucket and queue, the operations.
#[pg_extern]
fn queue_ops(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| series::queue_ops(c, &p)))
}

/// What retention deleted, by rule, per bucket (`from`, `to`, `queue`,
/// `bucket`): messages, segments and deletions (`GET
/// /api/v1/analytics/retention` is made from it).
#[pg_extern]
fn retention_series(params: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let p = parse_params(params);
    JsonOut::of(&spi::spi(|c| series::retention_series(c, &p)))
}

/// `GET /metrics`: uptime, request and message totals, connections.
#[pg_extern]
fn metrics_summary() -> JsonOut {
    JsonOut::of(&spi::spi(status::metrics_summary))
}

/// `POST /api/v1/stats/refresh`: counts are live; reports what they cover.
#[pg_extern]
fn stats_refresh() -> JsonOut {
    JsonOut::of(&spi::spi(status::stats_refresh))
}

/// A front-end's figures since its last report, added to the minute's row
/// of `worker_metrics` under (`hostname`, `worker_id`): the counts named as
/// the series' columns (`push_request_count`, ... `transaction_count`),
/// `pid` and `db_connections`, each a non-negative integer; an unknown key,
/// a negative or too large count, or the extension's own worker id is
/// refused (22023) and writes nothing. Answers the minute's row.
#[pg_extern]
fn front_metrics_report(worker_id: &str, hostname: &str, figures: pgrx::JsonB) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        crate::maintenance::metrics::report::report(c, worker_id, hostname, &figures.0)
    }))
}
