//! Queue options: the configure body's keys, their defaults, and how an edit
//! merges into what is stored. This is the one place that says what an
//! omitted option means.

use serde_json::{json, Map, Value};

use crate::pg::errors;
use crate::wire::json::as_i64;

/// Every option of Queen's configure body, with the value applied when it is
/// omitted on create, sent as null, or left out under `mode: replace`.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// (body key, column) for every option; the order of the SQL column list.
pub const COLUMNS: &[(&str, &str)] = &[
    ("namespace", "namespace"),
    ("task", "task"),
    ("priority", "priority"),
    ("leaseTime", "lease_time"),
    ("retryLimit", "retry_limit"),
    ("retryDelay", "retry_delay"),
    ("deadLetterQueue", "dead_letter_queue"),
    ("dlqAfterMaxRetries", "dlq_after_max_retries"),
    ("delayedProcessing", "delayed_processing"),
    ("windowBuffer", "window_buffer"),
    ("maxSize", "max_size"),
    ("maxQueueSize", "max_queue_size"),
    ("retentionEnabled", "retention_enabled"),
    ("retentionSeconds", "retention_seconds"),
    ("completedRetentionSeconds", "completed_retention_seconds"),
    ("maxWaitTimeSeconds", "max_wait_time_seconds"),
    ("dedupWindowSeconds", "dedup_window_seconds"),
    ("dlqRetentionSeconds", "dlq_retention_seconds"),
    ("minPopWaitTime", "min_pop_wait_time"),
    ("encryptionEnabled", "encryption_enabled"),
];

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
        let d = QueueOptions::default();
        let mut o = base.clone();
        for (key, v) in body {
            let field = format!("{path}.{key}");
            let null = v.is_null();
            macro_rules! set {
                ($f:ident, $conv:expr) => {
                    o.$f = if null { d.$f.clone() } else { $conv }
                };
            }
            match key.as_str() {
                "namespace" => set!(namespace, Some(text_opt(&field, v))),
                "task" => set!(task, Some(text_opt(&field, v))),
                "priority" => set!(priority, int_opt(&field, v, i32::MIN as i64)),
                "leaseTime" => set!(lease_time, int_opt(&field, v, 1)),
                "retryLimit" => set!(retry_limit, int_opt(&field, v, 0)),
                "retryDelay" => set!(retry_delay, int_opt(&field, v, 0)),
                "deadLetterQueue" => set!(dead_letter_queue, bool_opt(&field, v)),
                "dlqAfterMaxRetries" => set!(dlq_after_max_retries, bool_opt(&field, v)),
                "delayedProcessing" => set!(delayed_processing, int_opt(&field, v, 0)),
                "windowBuffer" => set!(window_buffer, int_opt(&field, v, 0)),
                "maxSize" => set!(max_size, int_opt(&field, v, 0)),
                "maxQueueSize" => set!(max_queue_size, int_opt(&field, v, 0)),
                "retentionEnabled" => set!(retention_enabled, bool_opt(&field, v)),
                "retentionSeconds" => set!(retention_seconds, int_opt(&field, v, 0)),
                "completedRetentionSeconds" => {
                    set!(completed_retention_seconds, int_opt(&field, v, 0))
                }
                "maxWaitTimeSeconds" => set!(max_wait_time_seconds, int_opt(&field, v, 0)),
                "dedupWindowSeconds" => set!(dedup_window_seconds, int_opt(&field, v, 0)),
                "dlqRetentionSeconds" => set!(dlq_retention_seconds, int_opt(&field, v, 0)),
                "minPopWaitTime" => set!(min_pop_wait_time, int_opt(&field, v, 0)),
                "encryptionEnabled" => set!(encryption_enabled, bool_opt(&field, v)),
                _ => errors::invalid(&field, "is not a queue option"),
            }
        }
        o
    }

    pub fn to_json(&self) -> Value {
        json!({
            "namespace": self.namespace,
            "task": self.task,
            "priority": self.priority,
            "leaseTime": self.lease_time,
            "retryLimit": self.retry_limit,
            "retryDelay": self.retry_delay,
            "deadLetterQueue": self.dead_letter_queue,
            "dlqAfterMaxRetries": self.dlq_after_max_retries,
            "delayedProcessing": self.delayed_processing,
            "windowBuffer": self.window_buffer,
            "maxSize": self.max_size,
            "maxQueueSize": self.max_queue_size,
            "retentionEnabled": self.retention_enabled,
            "retentionSeconds": self.retention_seconds,
            "completedRetentionSeconds": self.completed_retention_seconds,
            "maxWaitTimeSeconds": self.max_wait_time_seconds,
            "dedupWindowSeconds": self.dedup_window_seconds,
            "dlqRetentionSeconds": self.dlq_retention_seconds,
            "minPopWaitTime": self.min_pop_wait_time,
            "encryptionEnabled": self.encryption_enabled,
        })
    }

    /// Reads the options back from their JSON form (as stored rows are read,
    /// through `row_to_json`-like SQL in configure).
    pub fn from_json(v: &Value) -> QueueOptions {
        let map = v.as_object().cloned().unwrap_or_default();
        QueueOptions::apply(&QueueOptions::default(), &map, "options")
    }
}
