//! The front-end's own figures: the requests it answered per kind, counted
//! from the answers it already holds, and the task that adds them to the
//! minute's row of `queen.worker_metrics` (worker id `queen_front:<port>`,
//! this machine's host name) through `queen.front_metrics_report` every
//! `QUEEN_METRICS_REPORT_MS`. A report that fails keeps its figures for the
//! next one and logs a warning; no request waits on a report.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::config::Config;

/// The figures, as `queen.front_metrics_report` names them, in the order
/// of [`Figures::counts`].
pub const KEYS: [&str; 10] = [
    "push_request_count",
    "push_message_count",
    "pop_request_count",
    "pop_message_count",
    "pop_empty_count",
    "ack_request_count",
    "ack_success_count",
    "ack_failed_count",
    "dlq_count",
    "transaction_count",
];

/// The ack statuses that complete a message (the extension's names for it).
const COMPLETED: [&str; 4] = ["completed", "success", "acked", "ok"];

/// One figure: an index into [`KEYS`].
#[derive(Debug, Clone, Copy)]
pub enum Figure {
    PushRequests,
    PushMessages,
    PopRequests,
    PopMessages,
    PopEmpty,
    AckRequests,
    AckSuccess,
    AckFailed,
    Dlq,
    Transactions,
}

/// What every event-loop thread counts into since the last report.
#[derive(Debug, Default)]
pub struct Figures {
    counts: [AtomicU64; KEYS.len()],
}

impl Figures {
    /// Adds `n` to `figure`.
    pub fn add(&self, figure: Figure, n: u64) {
        if n > 0 {
            self.counts[figure as usize].fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Takes every count, leaving 0.
    pub fn take(&self) -> [u64; KEYS.len()] {
        std::array::from_fn(|i| self.counts[i].swap(0, Ordering::Relaxed))
    }

    /// Gives back counts a report did not write.
    pub fn give_back(&self, taken: &[u64; KEYS.len()]) {
        for (c, n) in self.counts.iter().zip(taken) {
            c.fetch_add(*n, Ordering::Relaxed);
        }
    }

    /// A push request answered with `messages` results.
    pub fn pushed(&self, messages: usize) {
        self.add(Figure::PushRequests, 1);
        self.add(Figure::PushMessages, messages as u64);
    }

    /// An answered ack request and its results: done (taken, and a status
    /// that completes the message), else failed, as the extension's own
    /// counters split them; and the dead letters written.
    pub fn acked(&self, answer: &str) {
        self.add(Figure::AckRequests, 1);
        #[derive(Deserialize)]
        struct Result<'a> {
            #[serde(default)]
            success: bool,
            #[serde(default, borrow)]
            status: Option<std::borrow::Cow<'a, str>>,
            #[serde(default)]
            dlq: bool,
        }
        impl Result<'_> {
            fn done(&self) -> bool {
                self.success
                    && self
                        .status
                        .as_deref()
                        .is_some_and(|s| COMPLETED.iter().any(|c| s.eq_ignore_ascii_case(c)))
            }
        }
        // One result or a list of them, told apart by the first byte (an
        // untagged enum would buffer the whole answer to try each shape).
        let results: Vec<Result<'_>> = match answer.trim_start().as_bytes().first() {
            Some(b'[') => serde_json::from_str(answer).unwrap_or_default(),
            Some(b'{') => serde_json::from_str(answer)
                .map(|r| vec![r])
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let done = results.iter().filter(|r| r.done()).count() as u64;
        self.add(Figure::AckSuccess, done);
        self.add(Figure::AckFailed, results.len() as u64 - done);
        self.add(Figure::Dlq, results.iter().filter(|r| r.dlq).count() as u64);
    }

    /// A pop request that delivered `messages` (0: an empty pop).
    pub fn popped(&self, messages: usize) {
        self.add(Figure::PopRequests, 1);
        if messages == 0 {
            self.add(Figure::PopEmpty, 1);
        } else {
            self.add(Figure::PopMessages, messages as u64);
        }
    }
}

/// The messages of a JSON pop answer.
pub fn pop_messages(answer: &str) -> usize {
    #[derive(Deserialize)]
    struct Pop {
        #[serde(default)]
        messages: Vec<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Pop>(answer).map_or(0, |p| p.messages.len())
}

/// The name of this machine: `/proc/sys/kernel/hostname`, else `HOSTNAME`,
/// else `localhost`.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// The worker id this front-end reports under.
pub fn worker_id(config: &Config) -> String {
    format!("queen_front:{}", config.port)
}

/// The figures of one report: `taken`, the process id and the
/// connections the pool holds.
pub fn record(taken: &[u64; KEYS.len()], connections: usize) -> Value {
    let mut m: Map<String, Value> = KEYS
        .iter()
        .zip(taken)
        .map(|(k, n)| (k.to_string(), Value::from(*n)))
        .collect();
    m.insert("pid".into(), Value::from(std::process::id()));
    m.insert("db_connections".into(), Value::from(connections));
    Value::Object(m)
}

/// The report task: every `period`, what was counted since the last report
/// that wrote goes to the database; a failure gives the counts back.
pub async fn run(
    pool: deadpool_postgres::Pool,
    config: Arc<Config>,
    figures: Arc<Figures>,
    period: Duration,
) {
    let (worker, host) = (worker_id(&config), hostname());
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let taken = figures.take();
        let rec = record(&taken, pool.status().size);
        let sent = crate::db::one_value::<Value>(
            &pool,
            config.request_timeout,
            "SELECT queen.front_metrics_report($1, $2, $3::jsonb)",
            &[&worker, &host, &rec],
        )
        .await;
        if let Err(e) = sent {
            figures.give_back(&taken);
            tracing::warn!(
                "reporting the front-end's figures: {}: {}; kept for the next report",
                e.code,
                e.message
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{pop_messages, record, Figure, Figures, KEYS};

    #[test]
    fn answers_are_counted_by_what_they_hold() {
        let f = Figures::default();
        f.pushed(2);
        f.pushed(0);
        f.acked(
            r#"[{"success":true,"status":"completed"},{"success":false,"status":"completed"},
                {"success":true,"status":"dlq","dlq":true},{"success":true,"status":"failed"}]"#,
        );
        f.acked(r#"{"success":true,"status":"completed"}"#);
        f.popped(pop_messages(
            r#"{"queue":"q","messages":[{"id":1},{"id":2}]}"#,
        ));
        f.popped(0);
        f.add(Figure::Transactions, 1);
        let t = f.take();
        let rec = record(&t, 3);
        assert_eq!(rec["push_request_count"], 2);
        assert_eq!(rec["push_message_count"], 2);
        assert_eq!(rec["ack_request_count"], 2);
        assert_eq!(rec["ack_success_count"], 2);
        assert_eq!(rec["ack_failed_count"], 3);
        assert_eq!(rec["dlq_count"], 1);
        assert_eq!(rec["pop_request_count"], 2);
        assert_eq!(rec["pop_message_count"], 2);
        assert_eq!(rec["pop_empty_count"], 1);
        assert_eq!(rec["transaction_count"], 1);
        assert_eq!(rec["db_connections"], 3);
        assert_eq!(rec.as_object().unwrap().len(), KEYS.len() + 2);
        // Taken is gone; given back is counted again.
        assert_eq!(f.take(), [0; KEYS.len()]);
        f.give_back(&t);
        f.add(Figure::PushRequests, 1);
        assert_eq!(f.take()[0], 3);
    }
}
