//! The metrics series inside PostgreSQL: a sample after pushes, pops and
//! acks writes the counts they made; the purge trims old rows; a sample and
//! a purge on a schema without the series' tables do nothing and do not
//! fail; the readers refuse bad parameters.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::tests::support::{js, n};

    fn call(sql: &str, arg: Value) -> Value {
        Spi::get_one_with_args::<Json>(sql, &[JsonB(arg).into()])
            .unwrap()
            .unwrap()
            .0
    }

    fn sample() -> Value {
        Spi::get_one::<JsonB>("SELECT queen_internal.metrics_sample()")
            .unwrap()
            .unwrap()
            .0
    }

    fn row(queue: &str, group: &str, column: &str) -> i64 {
        n(&format!(
            "SELECT sum({column})::int8 FROM queen.queue_lag_metrics m
               JOIN queen.queues q ON q.id = m.queue_id
              WHERE q.name = '{queue}' AND m.consumer_group = '{group}'"
        ))
    }

    /// Keeps the background metrics task from taking the counters while
    /// the test runs: its claim waits on this row lock.
    fn hold_task() {
        Spi::run("SELECT 1 FROM queen.maintenance_leases WHERE task = 'metrics' FOR UPDATE")
            .unwrap();
    }

    #[pg_test]
    fn a_sample_writes_the_counts_of_pushes_pops_and_acks_and_the_purge_trims() {
        hold_task();
        let items: Vec<Value> = (0..5)
            .map(|i| json!({"queue": "mx-orders", "payload": {"n": i}}))
            .collect();
        call("SELECT queen.push($1)", Value::Array(items));
        let popped = Spi::get_one::<Json>("SELECT queen.pop('mx-orders', NULL, 'mx-g', 3)")
            .unwrap()
            .unwrap()
            .0;
        let msgs = popped["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        let acks: Vec<Value> = msgs
            .iter()
            .enumerate()
            .map(|(k, m)| {
                json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                       "leaseId": m["leaseId"], "consumerGroup": "mx-g",
                       "status": if k < 2 { "completed" } else { "failed" }})
            })
            .collect();
        call("SELECT queen.ack($1)", Value::Array(acks));
        // An empty pop of another queue.
        call(
            "SELECT queen.push($1)",
            json!([{"queue": "mx-empty", "payload": 1}]),
        );
        Spi::run("SELECT queen.pop('mx-empty', NULL, NULL, 1, '{\"autoAck\": true}')").unwrap();
        Spi::run("SELECT queen.pop('mx-empty', NULL, NULL, 1)").unwrap();

        let s = sample();
        assert_eq!(s["skipped"], false);
        assert!(s["queues"].as_i64().unwrap() >= 3, "{s}");
        assert_eq!(s["workers"], 1);
        assert_eq!(s["systems"], 1);

        assert_eq!(row("mx-orders", "", "push_message_count"), 5);
        assert_eq!(row("mx-orders", "", "push_request_count"), 1);
        assert_eq!(row("mx-orders", "mx-g", "pop_message_count"), 3);
        assert_eq!(row("mx-orders", "mx-g", "pop_request_count"), 1);
        assert_eq!(row("mx-orders", "mx-g", "lag_count"), 1);
        assert_eq!(row("mx-orders", "mx-g", "ack_request_count"), 1);
        assert_eq!(row("mx-orders", "mx-g", "ack_success_count"), 2);
        assert_eq!(row("mx-orders", "mx-g", "ack_failed_count"), 1);
        assert_eq!(row("mx-empty", "__QUEUE_MODE__", "pop_request_count"), 2);
        assert_eq!(row("mx-empty", "__QUEUE_MODE__", "pop_empty_count"), 1);
        assert_eq!(row("mx-empty", "__QUEUE_MODE__", "pop_message_count"), 1);
        // The server-wide row holds at least this test's counts.
        assert!(
            n(
                "SELECT sum(push_message_count)::int8 FROM queen.worker_metrics
                WHERE worker_id = 'queen_ext' AND bucket_time = date_trunc('minute', now())"
            ) >= 6
        );
        assert!(n("SELECT count(*) FROM queen.system_metrics WHERE database_size_bytes > 0") >= 1);

        // A second sample adds to the same minute's rows; nothing new was
        // counted for the queue.
        sample();
        assert_eq!(row("mx-orders", "", "push_message_count"), 5);
        call(
            "SELECT queen.push($1)",
            json!([{"queue": "mx-orders", "payload": 9}]),
        );
        sample();
        assert_eq!(row("mx-orders", "", "push_message_count"), 6);

        // The readers see the live counts and the series.
        let detail = Spi::get_one::<Json>("SELECT queen.status_queue('mx-orders')")
            .unwrap()
            .unwrap()
            .0;
        let t = &detail["totals"]["messages"];
        assert_eq!(t["total"], 6);
        assert_eq!(t["completed"], 2, "{detail}");
        // The failed one waits for its retry, leased or not.
        assert_eq!(
            t["processing"].as_i64().unwrap() + t["pending"].as_i64().unwrap(),
            4,
            "{detail}"
        );
        let ops = call("SELECT queen.queue_ops($1)", json!({"queue": "mx-orders"}));
        let pushed: i64 = ops["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pushMessages"].as_i64().unwrap())
            .sum();
        assert_eq!(pushed, 6, "{ops}");
        let status = call("SELECT queen.status($1)", json!({"queue": "mx-orders"}));
        assert_eq!(status["bucketMinutes"], 1);
        assert_eq!(status["throughput"][0]["ingested"], 6, "{status}");
        assert_eq!(status["messages"]["completed"], 2);

        // The purge: an old row goes, the minute's rows stay.
        Spi::run(
            "INSERT INTO queen.queue_lag_metrics (bucket_time, queue_id, consumer_group)
             SELECT now() - interval '100 days', id, '' FROM queen.queues WHERE name = 'mx-orders'",
        )
        .unwrap();
        let before = n("SELECT count(*) FROM queen.queue_lag_metrics");
        let r = Spi::get_one::<JsonB>(
            "SELECT queen_internal.log_metrics_purge_step_v1(now() - interval '90 days', 1000)",
        )
        .unwrap()
        .unwrap()
        .0;
        assert!(r["deleted"].as_i64().unwrap() >= 1, "{r}");
        assert_eq!(r["done"], true);
        assert_eq!(
            n("SELECT count(*) FROM queen.queue_lag_metrics"),
            before - 1
        );
        assert_eq!(
            n("SELECT count(*) FROM queen.queue_lag_metrics
                WHERE bucket_time < now() - interval '90 days'"),
            0
        );

        // Without the series' tables (a 0.2.0 schema), the sample and the
        // purge do nothing and succeed.
        Spi::run("ALTER TABLE queen.worker_metrics RENAME TO worker_metrics_away").unwrap();
        assert_eq!(sample()["skipped"], true);
        let r = Spi::get_one::<JsonB>(
            "SELECT queen_internal.log_metrics_purge_step_v1(now() - interval '90 days', 1000)",
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(r["done"], true);
    }

    #[pg_test]
    fn the_readers_answer_queens_keys_on_an_empty_database() {
        let s = js("SELECT queen.status()");
        for k in [
            "timeRange",
            "bucketMinutes",
            "pointCount",
            "throughput",
            "queues",
            "messages",
            "leases",
            "deadLetterQueue",
            "workers",
            "errors",
            "statsAge",
        ] {
            assert!(s.get(k).is_some(), "status lacks {k}");
        }
        let o = js("SELECT queen.system_overview()");
        for k in [
            "queues",
            "partitions",
            "namespaces",
            "tasks",
            "messages",
            "lag",
            "throughput",
        ] {
            assert!(o.get(k).is_some(), "overview lacks {k}");
        }
        assert_eq!(js("SELECT queen.queue_lag()"), json!([]));
        let a = call(
            "SELECT queen.status_analytics($1)",
            json!({"from": "2026-01-01T00:00:00Z", "to": "2026-01-01T05:30:00Z"}),
        );
        assert_eq!(a["interval"], "hour");
        assert_eq!(a["dataPoints"].as_array().unwrap().len(), 6);
        assert_eq!(a["dataPoints"][0]["messages"], 0);
        let q = call("SELECT queen.status_queues($1)", json!({"limit": "5000"}));
        assert_eq!(q["pagination"]["limit"], 1000);
        let r = js("SELECT queen.stats_refresh()");
        assert_eq!(r["engine"], "segments");
        let m = js("SELECT queen.metrics_summary()");
        assert!(m["uptime"].as_i64().unwrap() >= 0);
    }

    #[pg_test(
        error = "from: \"yesterday\" is not an ISO 8601 timestamp (such as 2026-01-31T12:00:00Z)"
    )]
    fn a_bad_from_is_refused_naming_it() {
        call("SELECT queen.status($1)", json!({"from": "yesterday"}));
    }

    #[pg_test(error = "from: is after to")]
    fn from_after_to_is_refused() {
        call(
            "SELECT queen.worker_metrics_series($1)",
            json!({"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}),
        );
    }

    #[pg_test(error = "queue \"nope\" does not exist")]
    fn an_unknown_queue_detail_is_refused() {
        js("SELECT queen.status_queue('nope')");
    }
}
