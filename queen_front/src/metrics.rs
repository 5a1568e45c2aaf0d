//! The Prometheus text exposition of the per-queue figures
//! `queen.queues_list()` answers, of each consumer group's lag
//! (`queen.consumer_groups_list()`), of the timers
//! (`queen.sweeper_metrics()`), of the background tasks and the retention
//! cycle's work list (`queen.maintenance_status()`), and of the
//! front-end's fusion lanes.

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

/// A listing the scrapes share (the queues, the consumer groups): one
/// answer serves every scrape within its age (`QUEEN_METRICS_QUEUES_MS`),
/// and scrapes that come while it is being made wait for it instead of
/// making their own. However often and however many scrape, the database
/// makes at most one listing of each per age.
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

/// `list` is the answer of `queen.queues_list()`: `{"queues": [{"name", ...}],
/// "total"}`; at most `max` queues are exported (by name), the rest of
/// `total` (of the listed ones, without it) counted.
pub fn prometheus_text(list: &Value, max: usize) -> String {
    let all = list["queues"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let queues = &all[..all.len().min(max)];
    let total = list["total"]
        .as_u64()
        .map_or(all.len(), |t| (t as usize).max(all.len()));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP queen_queues_omitted Queues left out of this exposition (past QUEEN_METRICS_MAX_QUEUES).\n\
         # TYPE queen_queues_omitted gauge\nqueen_queues_omitted {}",
        total - queues.len()
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

/// Seconds since the Unix epoch of an ISO 8601 time in UTC as the
/// extension writes it (`2026-12-06T23:02:16.253Z`); None for anything else.
pub fn unix_seconds(iso: &str) -> Option<f64> {
    let (date, time) = iso.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.splitn(3, ':');
    let (hh, mm) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let ss = t.next()?.parse::<f64>().ok()?;
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || hh > 23
        || mm > 59
        || !(0.0..61.0).contains(&ss)
    {
        return None;
    }
    // Days from 1970-01-01 of the proleptic Gregorian date (the civil
    // calendar's days-from-epoch count).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + hh * 3_600 + mm * 60) as f64 + ss)
}

/// (metric, help, the group's field it reads) of the consumer groups'
/// figures, per (queue, group).
const GROUPS: &[(&str, &str, &str)] = &[
    (
        "queen_group_lag_messages",
        "Messages of the queue the consumer group has not consumed yet.",
        "totalLag",
    ),
    (
        "queen_group_lag_seconds",
        "Age of the oldest message the consumer group has not consumed yet.",
        "maxTimeLag",
    ),
    (
        "queen_group_leased_partitions",
        "Partitions of the queue the consumer group holds leased now.",
        "members",
    ),
    (
        "queen_group_partitions_lagging",
        "Partitions of the queue where the consumer group has messages to consume.",
        "partitionsWithLag",
    ),
];

/// The consumer groups' figures, from Queen's listing of them
/// (a bare array, one element per (group, queue), queue mode included as
/// `__QUEUE_MODE__`): at most `max` pairs, in the listing's order, the
/// rest counted in `queen_groups_omitted`.
pub fn groups_text(summary: &Value, max: usize) -> String {
    let all = summary.as_array().map(Vec::as_slice).unwrap_or_default();
    let groups = &all[..all.len().min(max)];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP queen_groups_omitted Consumer groups left out of this exposition (past QUEEN_METRICS_MAX_QUEUES).\n\
         # TYPE queen_groups_omitted gauge\nqueen_groups_omitted {}",
        all.len() - groups.len()
    );
    for (metric, help, field) in GROUPS {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} gauge");
        for g in groups {
            let queue = label_value(g["queueName"].as_str().unwrap_or(""));
            let group = label_value(g["name"].as_str().unwrap_or(""));
            let labels = match g["shard"].as_i64() {
                Some(n) => format!("queue=\"{queue}\",group=\"{group}\",shard=\"{n}\""),
                None => format!("queue=\"{queue}\",group=\"{group}\""),
            };
            let value = g[*field].as_f64().unwrap_or(0.0);
            let _ = writeln!(out, "{metric}{{{labels}}} {value}");
        }
    }
    out
}

/// (metric, help, type, the sweeper's field it reads, scale) of the timers'
/// figures.
const TIMERS: &[(&str, &str, &str, &str, f64)] = &[
    (
        "queen_timers_due",
        "Timers due and not fired yet, at the sweepers' last probe.",
        "gauge",
        "due",
        1.0,
    ),
    (
        "queen_timers_due_lateness_seconds",
        "How late the oldest due timer was at the sweepers' last probe.",
        "gauge",
        "probeLatenessMs",
        0.001,
    ),
    (
        "queen_timers_fired_total",
        "Timers fired into their queues (since the server started).",
        "counter",
        "firedTotal",
        1.0,
    ),
    (
        "queen_timers_fire_failed_total",
        "Timer fires that failed and will be tried again (since the server started).",
        "counter",
        "fireFailedTotal",
        1.0,
    ),
    (
        "queen_timers_set_aside",
        "Timers set aside for good after failing to fire.",
        "gauge",
        "timersSetAside",
        1.0,
    ),
];

/// The timers' figures, from `queen.sweeper_metrics()`; nothing when the
/// sweepers are not running (`"available": false`).
pub fn timers_text(sweeper: &Value) -> String {
    let mut out = String::new();
    if sweeper["available"] != Value::Bool(true) {
        return out;
    }
    for (metric, help, kind, field, scale) in TIMERS {
        if let Some(v) = sweeper[*field].as_f64() {
            let _ = writeln!(
                out,
                "# HELP {metric} {help}\n# TYPE {metric} {kind}\n{metric} {}",
                v * scale
            );
        }
    }
    out
}

/// (metric, help) of the background tasks' figures.
const TASKS: &[(&str, &str)] = &[
    (
        "queen_task_enabled",
        "Whether the background task is switched on (1) or off (0).",
    ),
    ("queen_task_running", "Whether the task is running now."),
    (
        "queen_task_failing",
        "Whether the task's last run ended with an error.",
    ),
    (
        "queen_task_last_started_timestamp_seconds",
        "When the task last started (Unix seconds).",
    ),
    (
        "queen_task_last_finished_timestamp_seconds",
        "When the task last finished a run (Unix seconds).",
    ),
    (
        "queen_task_last_duration_seconds",
        "How long the task's last finished run took.",
    ),
];

/// The background tasks' figures, from `queen.maintenance_status()` (one
/// row per task, a handful; through the sharding proxy, per shard too), as
/// gauges labelled by task (and shard). A time the task has not reached
/// yet is left out, not written as 0.
pub fn tasks_text(status: &Value) -> String {
    let tasks = status.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut out = String::new();
    for (i, (metric, help)) in TASKS.iter().enumerate() {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} gauge");
        for t in tasks {
            // Through the sharding proxy each shard answers its own tasks.
            let labels = match t["shard"].as_i64() {
                Some(n) => format!(
                    "task=\"{}\",shard=\"{n}\"",
                    label_value(t["task"].as_str().unwrap_or(""))
                ),
                None => format!("task=\"{}\"", label_value(t["task"].as_str().unwrap_or(""))),
            };
            let started = t["lastStartedAt"].as_str().and_then(unix_seconds);
            let finished = t["lastFinishedAt"].as_str().and_then(unix_seconds);
            let value = match i {
                0 => Some(f64::from(u8::from(t["enabled"].as_bool().unwrap_or(false)))),
                1 => Some(f64::from(u8::from(t["running"].as_bool().unwrap_or(false)))),
                2 => Some(f64::from(u8::from(!t["lastError"].is_null()))),
                3 => started,
                4 => finished,
                _ => match (started, finished) {
                    (Some(s), Some(f)) if f >= s => Some(f - s),
                    _ => None,
                },
            };
            if let Some(v) = value {
                let _ = writeln!(out, "{metric}{{{labels}}} {v}");
            }
        }
    }
    out.push_str(&work_list_text(tasks));
    out
}

/// (metric, help, the retention task's field it reads) of the retention
/// cycle's work list.
const WORK_LIST: &[(&str, &str, &str)] = &[
    (
        "queen_retention_partitions_due",
        "Partitions the last retention cycle found due.",
        "partitionsDue",
    ),
    (
        "queen_retention_partitions_backed_off",
        "Partitions due that the last retention cycle put off (they deleted nothing lately).",
        "partitionsBackedOff",
    ),
];

/// The retention task's work list (left out before its first cycle).
fn work_list_text(tasks: &[Value]) -> String {
    let mut out = String::new();
    for (metric, help, field) in WORK_LIST {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} gauge");
        for t in tasks.iter().filter(|t| t["task"] == "retention") {
            let Some(v) = t[*field].as_i64() else {
                continue;
            };
            match t["shard"].as_i64() {
                Some(n) => {
                    let _ = writeln!(out, "{metric}{{shard=\"{n}\"}} {v}");
                }
                None => {
                    let _ = writeln!(out, "{metric} {v}");
                }
            }
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

    use super::{
        fusion_text, groups_text, label_value, prometheus_text, tasks_text, timers_text,
        unix_seconds,
    };
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
    fn times_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(unix_seconds("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(
            unix_seconds("2026-12-06T23:02:16.25Z"),
            Some(1_796_598_136.25)
        );
        for bad in [
            "",
            "2026-12-06",
            "2026-13-01T00:00:00Z",
            "2026-12-06T23:02:16",
            "now",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn each_task_has_its_series_and_a_time_not_reached_is_left_out() {
        let status = json!([
            {"task": "retention", "enabled": true, "running": false, "lastError": null,
             "lastStartedAt": "2026-12-06T23:00:00Z", "lastFinishedAt": "2026-12-06T23:00:01.5Z"},
            {"task": "sweeper \"x\"", "enabled": false, "running": true, "lastError": "boom",
             "lastStartedAt": "2026-12-06T23:00:05Z", "lastFinishedAt": "2026-12-06T23:00:01Z"},
            {"task": "new", "enabled": true, "running": false, "lastError": null,
             "lastStartedAt": null, "lastFinishedAt": null},
            {"task": "retention", "shard": 2, "enabled": true, "running": false, "lastError": null,
             "lastStartedAt": null, "lastFinishedAt": null},
        ]);
        let text = tasks_text(&status);
        let lines: Vec<&str> = text.lines().collect();
        for line in [
            "queen_task_enabled{task=\"retention\"} 1",
            "queen_task_failing{task=\"retention\"} 0",
            "queen_task_last_started_timestamp_seconds{task=\"retention\"} 1796598000",
            "queen_task_last_finished_timestamp_seconds{task=\"retention\"} 1796598001.5",
            "queen_task_last_duration_seconds{task=\"retention\"} 1.5",
            "queen_task_enabled{task=\"sweeper \\\"x\\\"\"} 0",
            "queen_task_running{task=\"sweeper \\\"x\\\"\"} 1",
            "queen_task_failing{task=\"sweeper \\\"x\\\"\"} 1",
            "queen_task_enabled{task=\"new\"} 1",
            "queen_task_enabled{task=\"retention\",shard=\"2\"} 1",
        ] {
            assert!(lines.contains(&line), "{line} in\n{text}");
        }
        // A run under way since its last finish has no duration yet, and a
        // task that never ran has no times.
        assert!(!text.contains("queen_task_last_duration_seconds{task=\"sweeper"));
        assert!(!text.contains("timestamp_seconds{task=\"new\"}"));
        assert!(text.contains("# TYPE queen_task_last_duration_seconds gauge"));
    }

    #[test]
    fn each_group_has_its_lag_and_no_name_can_inject_a_series() {
        let summary = json!([
            {"name": "g", "queueName": "orders", "totalLag": 12, "maxTimeLag": 30,
             "members": 2, "partitionsWithLag": 3},
            {"name": "__QUEUE_MODE__", "queueName": "a\"} evil 1\n", "totalLag": 0,
             "maxTimeLag": 0, "members": 0, "partitionsWithLag": 0},
            {"name": "g", "queueName": "orders", "shard": 1, "totalLag": 5, "maxTimeLag": 7,
             "members": 0, "partitionsWithLag": 1},
            {"name": "late", "queueName": "past-the-bound", "totalLag": 1},
        ]);
        let text = groups_text(&summary, 3);
        let lines: Vec<&str> = text.lines().collect();
        for line in [
            "queen_groups_omitted 1",
            "queen_group_lag_messages{queue=\"orders\",group=\"g\"} 12",
            "queen_group_lag_seconds{queue=\"orders\",group=\"g\"} 30",
            "queen_group_leased_partitions{queue=\"orders\",group=\"g\"} 2",
            "queen_group_partitions_lagging{queue=\"orders\",group=\"g\"} 3",
            "queen_group_lag_messages{queue=\"orders\",group=\"g\",shard=\"1\"} 5",
            r#"queen_group_lag_messages{queue="a\"} evil 1\n",group="__QUEUE_MODE__"} 0"#,
        ] {
            assert!(lines.contains(&line), "{line} in\n{text}");
        }
        assert!(!text.contains("past-the-bound"), "{text}");
        for line in lines.iter().filter(|l| !l.starts_with('#')) {
            assert!(
                line.starts_with("queen_group_") || line.starts_with("queen_groups_omitted "),
                "{line}"
            );
        }
    }

    #[test]
    fn timers_are_exported_only_when_the_sweepers_run() {
        let sweeper = json!({"available": true, "due": 4, "probeLatenessMs": 1500,
                             "firedTotal": 90, "fireFailedTotal": 1, "timersSetAside": 0});
        let text = timers_text(&sweeper);
        for line in [
            "queen_timers_due 4",
            "queen_timers_due_lateness_seconds 1.5",
            "queen_timers_fired_total 90",
            "queen_timers_fire_failed_total 1",
            "queen_timers_set_aside 0",
            "# TYPE queen_timers_fired_total counter",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        let off = json!({"available": false, "reason": "not preloaded"});
        assert_eq!(timers_text(&off), "");
    }

    #[test]
    fn the_retention_work_list_is_exported_once_a_cycle_ran() {
        let status = json!([
            {"task": "retention", "enabled": true, "running": false, "lastError": null,
             "partitionsDue": 40, "partitionsBackedOff": 3},
            {"task": "retention", "shard": 2, "enabled": true, "running": false,
             "lastError": null, "partitionsDue": null, "partitionsBackedOff": null},
            {"task": "metrics", "enabled": true, "running": false, "lastError": null},
        ]);
        let text = tasks_text(&status);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.contains(&"queen_retention_partitions_due 40"),
            "{text}"
        );
        assert!(
            lines.contains(&"queen_retention_partitions_backed_off 3"),
            "{text}"
        );
        assert!(
            !text.contains("queen_retention_partitions_due{shard"),
            "{text}"
        );
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
