//! Fused calls: many requests a front-end gathered, made in one transaction
//! and answered one by one. Each element of the answer is `{"ok": <the
//! answer the request alone gets>}` or, for a request that fails alone,
//! `{"sqlstate", "error", "detail"}` (the ERROR it alone raises); the other
//! requests of the call commit all the same.

use pgrx::prelude::*;

use crate::engine::fused::{self, Answer, PushRequest};
use crate::pg::errors;
use crate::pg::settings;
use crate::wire::datum::JsonOut;

/// The answers of a fused call as one JSON array.
fn answers_json(answers: Vec<Answer>) -> JsonOut {
    let mut text = String::from("[");
    for (k, a) in answers.into_iter().enumerate() {
        if k > 0 {
            text.push(',');
        }
        match a {
            Ok(answer) => {
                text.push_str("{\"ok\":");
                text.push_str(&answer);
                text.push('}');
            }
            Err(e) => text.push_str(
                &serde_json::json!({
                    "sqlstate": e.sqlstate,
                    "error": e.message,
                    "detail": e.detail,
                })
                .to_string(),
            ),
        }
    }
    text.push(']');
    JsonOut(text)
}

/// The requests of a fused call, within `queen.fused_max_requests`.
fn bounded<T>(field: &str, v: Option<Vec<T>>) -> Vec<T> {
    let v = v.unwrap_or_else(|| errors::invalid(field, "is required"));
    let max = settings::fused_max_requests();
    if v.len() > max {
        errors::program_limit(
            field,
            format!(
                "{} requests is more than queen.fused_max_requests ({max})",
                v.len()
            ),
        );
    }
    v
}

/// Refuses an array argument that is not as long as the bodies.
fn same_length(field: &str, len: usize, want: usize) {
    if len != want {
        errors::invalid(
            field,
            format!("has {len} elements, the bodies {want}: give one per body"),
        );
    }
}

/// Many push requests in one transaction: `bodies[k]` is a body `push_text`
/// (JSON, `binary[k]` false) or `push_binary` (`binary[k]` true) takes,
/// stamped with `producers[k]`. Pushes to one partition are written as one
/// segment, in the order of the requests.
#[pg_extern]
fn push_fused(
    bodies: Option<Array<'_, &[u8]>>,
    binary: Option<Vec<Option<bool>>>,
    producers: Option<Vec<Option<String>>>,
) -> JsonOut {
    let bodies = bodies.unwrap_or_else(|| errors::invalid("bodies", "is required"));
    let bodies: Vec<Option<&[u8]>> = bounded("bodies", Some(bodies.iter().collect()));
    let binary = binary.unwrap_or_else(|| errors::invalid("binary", "is required"));
    let producers = producers.unwrap_or_else(|| vec![None; bodies.len()]);
    same_length("binary", binary.len(), bodies.len());
    same_length("producers", producers.len(), bodies.len());
    let requests: Vec<PushRequest<'_>> = bodies
        .iter()
        .enumerate()
        .map(|(k, b)| PushRequest {
            body: b.unwrap_or_else(|| errors::invalid(&format!("bodies[{k}]"), "is required")),
            binary: binary[k].unwrap_or(false),
            producer: producers[k].as_deref(),
        })
        .collect();
    answers_json(fused::push_many(&requests))
}

/// Many ack requests in one transaction: each body is one `ack_text` takes,
/// made one after the other.
#[pg_extern]
fn ack_fused(bodies: Option<Vec<Option<String>>>) -> JsonOut {
    let bodies = bounded("bodies", bodies);
    let bodies: Vec<&str> = bodies.iter().map(|b| b.as_deref().unwrap_or("")).collect();
    answers_json(fused::ack_many(&bodies))
}

/// Many lease renewals in one transaction: `lease_ids[k]` by `seconds[k]`
/// (NULL: each queue's lease time), as `renew_lease` makes them.
#[pg_extern]
fn renew_fused(
    lease_ids: Option<Vec<Option<String>>>,
    seconds: Option<Vec<Option<i32>>>,
) -> JsonOut {
    let lease_ids = bounded("lease_ids", lease_ids);
    let seconds = seconds.unwrap_or_else(|| vec![None; lease_ids.len()]);
    same_length("seconds", seconds.len(), lease_ids.len());
    let requests: Vec<(&str, Option<i32>)> = lease_ids
        .iter()
        .zip(&seconds)
        .map(|(l, s)| (l.as_deref().unwrap_or(""), *s))
        .collect();
    answers_json(fused::renew_many(&requests))
}
