//! An ephemeral queue's options: the closed list `configure` takes, checked
//! before anything is written, and the effective values (the declared ones
//! over the defaults of the `queen.ephemeral_*` settings).

use serde_json::{json, Map, Value};

use crate::pg::errors;
use crate::pg::settings;

/// The options `configure` takes; any other key is refused.
pub const KEYS: [&str; 7] = [
    "maxBytes",
    "maxLength",
    "policy",
    "ttlSeconds",
    "leaseSeconds",
    "retryLimit",
    "windowBuffer",
];

/// The longest ttl or lease, in seconds (a year).
pub const MAX_SECONDS: i64 = 365 * 86_400;

/// What a queue at its bounds does with a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Refuses the push (429 `queue_full`).
    Reject,
    /// Drops the oldest messages to make room, counted in `drops.bounds`.
    DropOldest,
}

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        match s {
            "reject" => Some(Policy::Reject),
            "dropOldest" => Some(Policy::DropOldest),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Reject => "reject",
            Policy::DropOldest => "dropOldest",
        }
    }
}

/// The options a queue runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    pub max_bytes: i64,
    pub max_length: i64,
    pub policy: Policy,
    /// 0: messages do not expire.
    pub ttl_seconds: i64,
    pub lease_seconds: i64,
    /// Deliveries a message gets before a failure drops it.
    pub retry_limit: i64,
    pub window_ms: i64,
    pub window_count: i64,
}

fn non_negative(field: &str, v: &Value, max: i64) -> i64 {
    match v.as_i64() {
        Some(n) if (0..=max).contains(&n) => n,
        Some(n) if n >= 0 => errors::invalid(field, format!("{n} is more than {max}")),
        _ => errors::invalid(field, "must be a non-negative integer"),
    }
}

/// Checks a `configure` options object: the closed list, non-negative
/// integers, `policy` reject or dropOldest, `windowBuffer` `{ms?, count?}`.
/// Answers the object to store (nulls left out).
pub fn check(options: &Value) -> Value {
    let Value::Object(map) = options else {
        errors::invalid("options", "must be an object");
    };
    let mut stored = Map::new();
    for (key, value) in map {
        if !KEYS.contains(&key.as_str()) {
            errors::invalid(
                &format!("options.{key}"),
                format!("is not an option; the options are {}", KEYS.join(", ")),
            );
        }
        if value.is_null() {
            continue;
        }
        let field = format!("options.{key}");
        match key.as_str() {
            "policy" => {
                if value.as_str().and_then(Policy::parse).is_none() {
                    errors::invalid(&field, "must be \"reject\" or \"dropOldest\"");
                }
            }
            "windowBuffer" => {
                let Value::Object(w) = value else {
                    errors::invalid(&field, "must be an object {ms?, count?}");
                };
                for (k, v) in w {
                    if k != "ms" && k != "count" {
                        errors::invalid(&format!("{field}.{k}"), "is not ms or count");
                    }
                    if !v.is_null() {
                        non_negative(&format!("{field}.{k}"), v, i32::MAX as i64);
                    }
                }
            }
            "ttlSeconds" | "leaseSeconds" => {
                non_negative(&field, value, MAX_SECONDS);
            }
            _ => {
                non_negative(&field, value, i64::MAX);
            }
        }
        stored.insert(key.clone(), value.clone());
    }
    Value::Object(stored)
}

/// The effective options of a queue declared with `declared` (checked by
/// [`check`]; None: an implicit queue), over the settings' defaults. A 0
/// for maxBytes, maxLength or leaseSeconds means the default.
pub fn effective(declared: Option<&Value>) -> Effective {
    let policy = settings::ephemeral_policy();
    let mut e = Effective {
        max_bytes: settings::ephemeral_max_bytes(),
        max_length: settings::ephemeral_max_length(),
        policy: Policy::parse(&policy).unwrap_or_else(|| {
            errors::invalid(
                "queen.ephemeral_policy",
                format!("{policy:?} is not reject or dropOldest"),
            )
        }),
        ttl_seconds: settings::ephemeral_ttl_seconds(),
        lease_seconds: settings::ephemeral_lease_seconds(),
        retry_limit: settings::ephemeral_retry_limit(),
        window_ms: 0,
        window_count: 0,
    };
    let Some(Value::Object(d)) = declared else {
        return e;
    };
    let int = |k: &str| d.get(k).and_then(Value::as_i64);
    if let Some(n) = int("maxBytes").filter(|n| *n > 0) {
        e.max_bytes = n;
    }
    if let Some(n) = int("maxLength").filter(|n| *n > 0) {
        e.max_length = n;
    }
    if let Some(p) = d
        .get("policy")
        .and_then(Value::as_str)
        .and_then(Policy::parse)
    {
        e.policy = p;
    }
    if let Some(n) = int("ttlSeconds") {
        e.ttl_seconds = n;
    }
    if let Some(n) = int("leaseSeconds").filter(|n| *n > 0) {
        e.lease_seconds = n;
    }
    if let Some(n) = int("retryLimit") {
        e.retry_limit = n;
    }
    if let Some(Value::Object(w)) = d.get("windowBuffer") {
        e.window_ms = w.get("ms").and_then(Value::as_i64).unwrap_or(0);
        e.window_count = w.get("count").and_then(Value::as_i64).unwrap_or(0);
    }
    e
}

impl Effective {
    /// As the listings answer it, in Queen's shape.
    pub fn to_json(&self) -> Value {
        json!({
            "maxBytes": self.max_bytes,
            "maxLength": self.max_length,
            "policy": self.policy.as_str(),
            "ttlSeconds": self.ttl_seconds,
            "leaseSeconds": self.lease_seconds,
            "retryLimit": self.retry_limit,
            "windowBuffer": {"ms": self.window_ms, "count": self.window_count},
        })
    }
}
