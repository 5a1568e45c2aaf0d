//! The Prometheus text exposition of the per-queue figures
//! `queen.list_queues()` answers, and of the front-end's fusion lanes.

use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::fusion::{Kind, LaneStats, Stats, CALL_SIZE_BOUNDS};

use serde_json::Value;

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4";

/// (metric, help, type, the queue's field it reads).
const METRICS: &[(&str, &str, &str, &str)] = &[
    (
        "queen_queue_messages",
        "Messages kept in the queue's partitions.",
        "gauge",
        "messages",
    ),
    (
        "queen_queue_partitions",
        "Partitions of the queue.",
        "gauge",
        "partitions",
    ),
    (
        "queen_queue_failed",
        "Dead letters of the queue.",
        "gauge",
        "failed",
    ),
    (
        "queen_queue_pruned_failed_total",
        "Dead letters removed by DLQ retention (cumulative).",
        "counter",
        "pruned_failed",
    ),
];

/// A label value as the text format writes it: backslash, double quote and
/// line feed escaped, so no name can end the value or the line.
pub fn label_value(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The queue listing the scrapes share: one `queen.list_queues()` serves
/// every scrape within its age (`QUEEN_METRICS_QUEUES_MS`), and scrapes
/// that come while it is being made wait for it instead of making their
/// own. However often and however many scrape, the database makes at most
/// one listing per age.
#[derive(Default)]
pub struct QueueListing {
    made: tokio::sync::Mutex<Option<(std::time::Instant, Arc<Value>)>>,
}

impl QueueListing {
    /// The listing, made by `list` when the one held is older than `age`.
    pub async fn get<F, Fut, E>(&self, age: std::time::Duration, list: F) -> Result<Arc<Value>, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Value, E>>,
    {
        let mut made = self.made.lock().await;
        if let Some((at, listing)) = made.as_ref() {
            if at.elapsed() < age {
                return Ok(Arc::clone(listing));
            }
        }
        let listing = Arc::new(list().await?);
        *made = Some((std::time::Instant::now(), Arc::clone(&listing)));
        Ok(listing)
    }
}

/// `list` is the answer of `queen.list_queues()`: `{"queues": [{"name", ...}]}`;
/// at most `max` queues are exported (by name), the rest counted.
pub fn prometheus_text(list: &Value, max: usize) -> String {
    let all = list["queues"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let queues = &all[..all.len().min(max)];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP queen_queues_omitted Queues left out of this exposition (past QUEEN_METRICS_MAX_QUEUES).\n\
         # TYPE queen_queues_omitted gauge\nqueen_queues_omitted {}",
        all.len() - queues.len()
    );
    for (metric, help, kind, key) in METRICS {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} {kind}");
        for q in queues {
            let name = label_value(q["name"].as_str().unwrap_or(""));
            let _ = writeln!(
                out,
                "{metric}{{queue=\"{name}\"}} {}",
                q[*key].as_i64().unwrap_or(0)
            );
        }
    }
    out
}

/// (metric, help, type) of the fusion lanes' figures, with the figure
/// each reads.
type LaneFigure = fn(&LaneStats) -> u64;
const FUSION: &[(&str, &str, &str, LaneFigure)] = &[
    (
        "queen_front_fusion_requests_total",
        "Requests a fusion lane answered.",
        "counter",
        |l| l.requests.load(Ordering::Relaxed),
    ),
    (
        "queen_front_fusion_calls_total",
        "Database calls a fusion lane made for them.",
        "counter",
        |l| l.calls.load(Ordering::Relaxed),
    ),
    (
        "queen_front_fusion_retried_calls_total",
        "Fused calls that failed as a whole, their requests made again alone.",
        "counter",
        |l| l.retried_calls.load(Ordering::Relaxed),
    ),
    (
        "queen_front_fusion_largest_call",
        "The most requests one call of a fusion lane held.",
        "gauge",
        |l| l.largest_call.load(Ordering::Relaxed),
    ),
];

/// The fusion lanes' figures in the Prometheus text format, one series per
/// lane (`push`, `ack`, `renew`); requests over calls is the fusion ratio.
pub fn fusion_text(stats: &Stats) -> String {
    let mut out = String::new();
    for (metric, help, kind, read) in FUSION {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} {kind}");
        for lane in Kind::ALL {
            let _ = writeln!(
                out,
                "{metric}{{lane=\"{}\"}} {}",
                lane.name(),
                read(stats.lane(lane))
            );
        }
    }
    let metric = "queen_front_fusion_call_requests";
    let _ = writeln!(
        out,
        "# HELP {metric} Requests per call of a fusion lane (a fused call, or a request's own).\n\
         # TYPE {metric} histogram"
    );
    for lane in Kind::ALL {
        let l = stats.lane(lane);
        let name = lane.name();
        let mut seen = 0;
        let bounds = CALL_SIZE_BOUNDS.iter().map(|b| b.to_string());
        for (count, le) in l.call_sizes.iter().zip(bounds.chain(["+Inf".into()])) {
            seen += count.load(Ordering::Relaxed);
            let _ = writeln!(out, "{metric}_bucket{{lane=\"{name}\",le=\"{le}\"}} {seen}");
        }
        let sum = l.requests.load(Ordering::Relaxed);
        let _ = writeln!(out, "{metric}_sum{{lane=\"{name}\"}} {sum}");
        let _ = writeln!(out, "{metric}_count{{lane=\"{name}\"}} {seen}");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use serde_json::json;

    use super::{fusion_text, label_value, prometheus_text};
    use crate::fusion::{Kind, Stats, CALL_SIZE_BOUNDS};

    #[test]
    fn every_lane_has_its_series() {
        let stats = Stats::default();
        stats
            .lane(Kind::Push)
            .requests
            .store(640, Ordering::Relaxed);
        stats.lane(Kind::Push).calls.store(20, Ordering::Relaxed);
        stats
            .lane(Kind::Ack)
            .largest_call
            .store(7, Ordering::Relaxed);
        let text = fusion_text(&stats);
        assert!(text.contains("queen_front_fusion_requests_total{lane=\"push\"} 640\n"));
        assert!(text.contains("queen_front_fusion_calls_total{lane=\"push\"} 20\n"));
        assert!(text.contains("queen_front_fusion_largest_call{lane=\"ack\"} 7\n"));
        assert!(text.contains("queen_front_fusion_requests_total{lane=\"renew\"} 0\n"));
        // Four metrics, each a HELP, a TYPE and one line per lane; then the
        // histogram: a HELP, a TYPE, and per lane a line per bucket, a sum
        // and a count.
        let buckets = CALL_SIZE_BOUNDS.len() + 1;
        assert_eq!(text.lines().count(), 4 * (2 + 3) + 2 + 3 * (buckets + 2));
    }

    #[test]
    fn the_call_size_histogram_is_cumulative() {
        let stats = Stats::default();
        let push = stats.lane(Kind::Push);
        // Calls of 1, 3, 3 and 2000 requests (more than every bound).
        push.call_sizes[0].store(1, Ordering::Relaxed);
        push.call_sizes[2].store(2, Ordering::Relaxed);
        push.call_sizes[CALL_SIZE_BOUNDS.len()].store(1, Ordering::Relaxed);
        push.requests.store(2007, Ordering::Relaxed);
        let text = fusion_text(&stats);
        let m = "queen_front_fusion_call_requests";
        for (le, n) in [
            ("1", 1),
            ("2", 1),
            ("4", 3),
            ("512", 3),
            ("1000", 3),
            ("+Inf", 4),
        ] {
            let line = format!("{m}_bucket{{lane=\"push\",le=\"{le}\"}} {n}\n");
            assert!(text.contains(&line), "{line:?} in {text}");
        }
        assert!(text.contains(&format!("{m}_sum{{lane=\"push\"}} 2007\n")));
        assert!(text.contains(&format!("{m}_count{{lane=\"push\"}} 4\n")));
        assert!(text.contains(&format!("{m}_count{{lane=\"ack\"}} 0\n")));
        assert!(text.contains(&format!("# TYPE {m} histogram\n")));
    }

    #[test]
    fn a_queue_name_can_not_inject_a_series() {
        let evil = "a\"} evil_series 1\n";
        let text = prometheus_text(
            &json!({"queues": [
                {"name": evil, "messages": 3, "partitions": 1, "failed": 0, "pruned_failed": 0},
                {"name": "orders", "messages": 5, "partitions": 2, "failed": 1, "pruned_failed": 4},
            ]}),
            10,
        );
        let lines: Vec<&str> = text.lines().collect();
        // The omitted count (HELP, TYPE, one line), then four metrics, each
        // a HELP, a TYPE and one line per queue.
        assert_eq!(lines.len(), 3 + 4 * 4, "{text}");
        assert!(lines.contains(&"queen_queues_omitted 0"), "{text}");
        for line in &lines {
            assert!(
                line.starts_with("# ")
                    || line.starts_with("queen_queue_")
                    || line.starts_with("queen_queues_omitted "),
                "{line:?}"
            );
        }
        assert!(!lines.iter().any(|l| l.starts_with("evil_series")));
        assert!(lines.contains(&r#"queen_queue_messages{queue="a\"} evil_series 1\n"} 3"#));
        assert!(lines.contains(&r#"queen_queue_pruned_failed_total{queue="orders"} 4"#));
        // Each sample line is `name{queue="..."} value`, its value a number.
        for line in lines.iter().filter(|l| l.starts_with("queen_queue_")) {
            let (_, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<i64>().is_ok(), "{line:?}");
            assert!(line.ends_with(&format!("\"}} {value}")), "{line:?}");
        }
    }

    #[test]
    fn label_values_escape_what_the_text_format_requires() {
        assert_eq!(label_value(r"a\b"), r"a\\b");
        assert_eq!(label_value("say \"hi\""), r#"say \"hi\""#);
        assert_eq!(label_value("two\nlines"), r"two\nlines");
        assert_eq!(label_value("plain-name_1.x"), "plain-name_1.x");
    }

    #[test]
    fn no_queues_is_the_headers_alone() {
        let text = prometheus_text(&json!({"queues": []}), 10);
        assert_eq!(text.lines().count(), 3 + 8);
        assert_eq!(prometheus_text(&json!({}), 10), text);
    }

    #[test]
    fn queues_past_the_bound_are_counted_not_exported() {
        let queues: Vec<_> = (0..5)
            .map(|i| json!({"name": format!("q{i}"), "messages": i}))
            .collect();
        let text = prometheus_text(&json!({ "queues": queues }), 2);
        assert!(text.contains("queen_queues_omitted 3\n"), "{text}");
        assert!(text.contains("queen_queue_messages{queue=\"q1\"} 1\n"));
        assert!(!text.contains("queue=\"q2\""), "{text}");
    }

    #[tokio::test]
    async fn scrapes_within_the_age_share_one_listing() {
        let listing = super::QueueListing::default();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let list = || async {
            made.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            Ok::<_, ()>(json!({"queues": []}))
        };
        let age = std::time::Duration::from_secs(60);
        // Concurrent scrapes wait for the one being made.
        let (a, b) = tokio::join!(listing.get(age, list), listing.get(age, list));
        assert!(a.is_ok() && b.is_ok());
        listing.get(age, list).await.unwrap();
        assert_eq!(made.load(Ordering::SeqCst), 1);
        // Past its age, the next scrape makes a new one.
        listing.get(std::time::Duration::ZERO, list).await.unwrap();
        assert_eq!(made.load(Ordering::SeqCst), 2);
    }
}
