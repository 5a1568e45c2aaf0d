//! Queue options: the configure body's keys, their defaults, and how an edit
//! merges into what is stored. This is the one place that says what an
//! omitted option means: the struct below is the list of options (its serde
//! names are the body's keys, its field names the `queen.queues` columns).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::pg::errors;
use crate::wire::json::as_i64;

/// Every option of Queen's configure body, with the value applied when it is
/// omitted on create, sent as null, or left out under `mode: replace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueOptions {
    pub namespace: Option<String>,
    pub task: Option<String>,
    pub priority: i32,
    /// Seconds a popped batch stays leased before it is handed out again.
    pub lease_time: i32,
    pub retry_limit: i32,
    /// Milliseconds before a failed batch is delivered again.
    pub retry_delay: i32,
    pub dead_letter_queue: bool,
    pub dlq_after_max_retries: bool,
    pub delayed_processing: i32,
    pub window_buffer: i32,
    pub max_size: i32,
    pub max_queue_size: i32,
    pub retention_enabled: bool,
    pub retention_seconds: i32,
    pub completed_retention_seconds: i32,
    pub max_wait_time_seconds: i32,
    pub dedup_window_seconds: i32,
    pub dlq_retention_seconds: i32,
    pub min_pop_wait_time: i32,
    pub encryption_enabled: bool,
}

impl Default for QueueOptions {
    fn default() -> Self {
        QueueOptions {
            namespace: None,
            task: None,
            priority: 0,
            lease_time: 60,
            retry_limit: 3,
            retry_delay: 1000,
            dead_letter_queue: false,
            dlq_after_max_retries: false,
            delayed_processing: 0,
            window_buffer: 0,
            max_size: 0,
            max_queue_size: 0,
            retention_enabled: false,
            retention_seconds: 0,
            completed_retention_seconds: 0,
            max_wait_time_seconds: 0,
            // Not measured: an hour covers a client's retries of one push.
            dedup_window_seconds: 3600,
            dlq_retention_seconds: 0,
            min_pop_wait_time: 0,
            encryption_enabled: false,
        }
    }
}

/// The least value an integer option takes; 0 unless named here.
fn minimum(key: &str) -> i64 {
    match key {
        "priority" => i32::MIN as i64,
        "leaseTime" => 1,
        _ => 0,
    }
}

/// A body key's column: `leaseTime` is `lease_time`.
pub fn column_of(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for ch in key.chars() {
        if ch.is_ascii_uppercase() {
            out.push('_');
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// (body key, column) for every option, in one fixed order.
pub fn columns() -> &'static [(String, String)] {
    static COLUMNS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    COLUMNS.get_or_init(|| {
        let defaults = QueueOptions::default().to_json();
        let keys = defaults
            .as_object()
            .expect("options serialize as an object")
            .keys();
        keys.map(|k| (k.clone(), column_of(k))).collect()
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Merge,
    Replace,
}

impl Mode {
    pub fn parse(s: &str) -> Mode {
        match s {
            "merge" => Mode::Merge,
            "replace" => Mode::Replace,
            other => errors::invalid("mode", format!("{other:?} is not one of merge, replace")),
        }
    }
}

fn int_opt(field: &str, v: &Value, min: i64) -> i32 {
    if !v.is_number() {
        errors::wrong_type(field, "an integer");
    }
    let n = as_i64(field, v);
    if n < min || n > i32::MAX as i64 {
        errors::invalid(
            field,
            format!("{n} is out of range ({min} to {})", i32::MAX),
        );
    }
    n as i32
}

fn bool_opt(field: &str, v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        _ => errors::wrong_type(field, "true or false"),
    }
}

fn text_opt(field: &str, v: &Value) -> String {
    match v {
        Value::String(s) => crate::wire::json::check_name(field, s).to_owned(),
        _ => errors::wrong_type(field, "a string"),
    }
}

impl QueueOptions {
    /// Applies a configure body's options onto `base` (the stored options
    /// under merge, the defaults on create and under replace). A key sent as
    /// null goes back to its default. Unknown keys are refused.
    pub fn apply(base: &QueueOptions, body: &Map<String, Value>, path: &str) -> QueueOptions {
        let defaults = QueueOptions::default().to_json();
        let mut merged = base.to_json();
        for (key, v) in body {
            if KeptOptions::is_kept(key) || key == REPLACE {
                // Read by KeptOptions::apply and configure.
                continue;
            }
            let field = format!("{path}.{key}");
            let Some(default) = defaults.get(key) else {
                errors::invalid(&field, "is not a queue option");
            };
            let value = if v.is_null() {
                default.clone()
            } else {
                match default {
                    Value::Bool(_) => Value::Bool(bool_opt(&field, v)),
                    Value::Number(_) => Value::from(int_opt(&field, v, minimum(key))),
                    _ => Value::String(text_opt(&field, v)),
                }
            };
            merged[key.as_str()] = value;
        }
        serde_json::from_value(merged).expect("checked options deserialize")
    }

    /// The options as the configure body spells them.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("options serialize")
    }

    /// Reads the options back from their JSON form (as stored rows are read,
    /// through `row_to_json`-like SQL in configure).
    pub fn from_json(v: &Value) -> QueueOptions {
        let map = v.as_object().cloned().unwrap_or_default();
        QueueOptions::apply(&QueueOptions::default(), &map, "options")
    }
}

/// Queen's directive in the configure body: `"replace": true` is the mode
/// `replace` (read, never stored).
pub const REPLACE: &str = "replace";

/// Options of Queen's configure body that queen takes, stores and answers
/// back without acting on them (docs/http.md says why for each), with the
/// values Queen's server applies when they are omitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeptOptions {
    /// Seconds; Queen's server stores it and nothing there reads it.
    pub ttl: i32,
    /// The retention sink whose archive position holds retention back in
    /// Queen's server. queen has no sink to release a hold, so only `""`
    /// (off) is taken: a hold taken and never honoured would let retention
    /// delete what the caller asked to keep.
    pub retention_sink_hold: String,
    /// Seconds; the longest a sink hold lasts (60 to 31 536 000).
    pub retention_sink_hold_max_seconds: i32,
}

impl Default for KeptOptions {
    fn default() -> Self {
        KeptOptions {
            ttl: 3600,
            retention_sink_hold: String::new(),
            retention_sink_hold_max_seconds: 604_800,
        }
    }
}

/// The longest sink hold Queen's server takes: one year, in seconds.
const SINK_HOLD_MAX_SECONDS: i64 = 31_536_000;
/// The shortest sink hold ceiling Queen's server takes, in seconds.
const SINK_HOLD_MIN_SECONDS: i64 = 60;

impl KeptOptions {
    /// Whether `key` is one of these options.
    pub fn is_kept(key: &str) -> bool {
        matches!(
            key,
            "ttl" | "retentionSinkHold" | "retentionSinkHoldMaxSeconds"
        )
    }

    /// Applies the body's keys of these options onto `base` (the stored ones
    /// under merge, the defaults otherwise); null goes back to the default.
    /// Every other key is left to [`QueueOptions::apply`].
    pub fn apply(base: &KeptOptions, body: &Map<String, Value>, path: &str) -> KeptOptions {
        let defaults = KeptOptions::default();
        let mut out = base.clone();
        for (key, v) in body.iter().filter(|(k, _)| KeptOptions::is_kept(k)) {
            let field = format!("{path}.{key}");
            match key.as_str() {
                "ttl" => {
                    out.ttl = if v.is_null() {
                        defaults.ttl
                    } else {
                        int_opt(&field, v, 0)
                    }
                }
                "retentionSinkHoldMaxSeconds" => {
                    out.retention_sink_hold_max_seconds = if v.is_null() {
                        defaults.retention_sink_hold_max_seconds
                    } else {
                        let n = int_opt(&field, v, i32::MIN as i64);
                        if !(SINK_HOLD_MIN_SECONDS..=SINK_HOLD_MAX_SECONDS).contains(&(n as i64)) {
                            errors::invalid(
                                &field,
                                format!(
                                    "{n} is out of range ({SINK_HOLD_MIN_SECONDS} to \
                                     {SINK_HOLD_MAX_SECONDS})"
                                ),
                            );
                        }
                        n
                    }
                }
                _ => {
                    let hold = match v {
                        Value::Null => String::new(),
                        Value::String(s) => s.clone(),
                        _ => errors::wrong_type(&field, "a string"),
                    };
                    if !hold.is_empty() {
                        errors::invalid(
                            &field,
                            format!(
                                "{hold:?}: queen has no retention sinks, so a hold on one would \
                                 never be released; only \"\" (off) is taken"
                            ),
                        );
                    }
                    out.retention_sink_hold = hold;
                }
            }
        }
        out
    }

    /// The options as the configure body spells them.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("options serialize")
    }

    /// Reads stored options back; a key missing goes to its default.
    pub fn from_json(v: &Value) -> KeptOptions {
        let map = v.as_object().cloned().unwrap_or_default();
        KeptOptions::apply(&KeptOptions::default(), &map, "stored options")
    }
}
