//! A front-end's report of its own figures: each report adds to the
//! minute's row of its producer, and a bad report is refused with 22023
//! naming the figure and writes nothing.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::Json;
    use serde_json::{json, Value};

    use crate::tests::support::n;

    fn report(worker: &str, host: &str, figures: Value) -> Value {
        Spi::get_one_with_args::<Json>(
            "SELECT queen.front_metrics_report($1, $2, $3::jsonb)",
            &[worker.into(), host.into(), figures.to_string().into()],
        )
        .unwrap()
        .unwrap()
        .0
    }

    /// `SQLSTATE: message` of a failed report, `ok` when it passed.
    fn refusal(worker: &str, host: &str, figures: &str) -> String {
        Spi::run(
            "CREATE OR REPLACE FUNCTION pg_temp.refusal(w text, h text, f text) RETURNS text
             LANGUAGE plpgsql AS $$
             BEGIN PERFORM queen.front_metrics_report(w, h, f::jsonb); RETURN 'ok';
             EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$",
        )
        .unwrap();
        Spi::get_one_with_args::<String>(
            "SELECT pg_temp.refusal($1, $2, $3)",
            &[worker.into(), host.into(), figures.into()],
        )
        .unwrap()
        .unwrap()
    }

    fn column(worker: &str, column: &str) -> i64 {
        n(&format!(
            "SELECT COALESCE(sum({column}), 0)::int8 FROM queen.worker_metrics
              WHERE worker_id = '{worker}' AND hostname = 'front-host'"
        ))
    }

    #[pg_test]
    fn a_report_adds_to_the_minutes_row() {
        let first = report(
            "queen_front:7000",
            "front-host",
            json!({"push_request_count": 3, "push_message_count": 30, "pop_request_count": 2,
                   "pop_message_count": 20, "pop_empty_count": 1, "ack_request_count": 4,
                   "ack_success_count": 19, "ack_failed_count": 1, "transaction_count": 2,
                   "pid": 4242, "db_connections": 8}),
        );
        assert_eq!(first["workerId"], "queen_front:7000");
        assert_eq!(first["hostname"], "front-host");
        assert_eq!(first["push_message_count"], 30);
        assert_eq!(first["pid"], 4242);
        assert!(first["bucketTime"].as_str().unwrap().ends_with('Z'));
        // Left-out keys count 0; the counts add up, connections are the last.
        let second = report(
            "queen_front:7000",
            "front-host",
            json!({"push_request_count": 1, "push_message_count": 5, "db_connections": 6}),
        );
        assert_eq!(second["push_request_count"], 4);
        assert_eq!(second["push_message_count"], 35);
        assert_eq!(second["pop_message_count"], 20);
        assert_eq!(second["db_connections"], 6);
        let rows = "SELECT count(*) FROM queen.worker_metrics WHERE worker_id = 'queen_front:7000'";
        assert_eq!(n(rows), 1, "one row for the minute");
        assert_eq!(column("queen_front:7000", "push_message_count"), 35);
        assert_eq!(column("queen_front:7000", "ack_success_count"), 19);
        assert_eq!(column("queen_front:7000", "transaction_count"), 2);
        // Another front is a row of its own.
        report(
            "queen_front:7001",
            "front-host",
            json!({"pop_empty_count": 9}),
        );
        assert_eq!(column("queen_front:7001", "pop_empty_count"), 9);
        assert_eq!(column("queen_front:7000", "pop_empty_count"), 1);
        // And the analytics reader answers it under its worker id.
        let series = Spi::get_one::<Json>(
            r#"SELECT queen.worker_metrics_series('{"workerId": "queen_front:7000"}')"#,
        )
        .unwrap()
        .unwrap()
        .0;
        let text = series.to_string();
        assert!(text.contains("\"pushMessages\":35"), "{text}");
        // The totals over every producer are the extension's own count of
        // the work (no sample here: 0); the workers list every producer.
        let all = Spi::get_one::<Json>("SELECT queen.worker_metrics_series('{}')")
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(all["summary"]["totalPushMessages"], 0, "{all}");
        let ids: Vec<&str> = all["workers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w["workerId"].as_str())
            .collect();
        assert!(ids.contains(&"queen_front:7000"), "{all}");
        assert!(ids.contains(&"queen_front:7001"), "{all}");
    }

    #[pg_test]
    fn a_bad_report_is_refused_and_writes_nothing() {
        for (worker, host, figures, names) in [
            (
                "queen_front:1",
                "h",
                r#"{"push_request_count": -1}"#,
                "push_request_count",
            ),
            ("queen_front:1", "h", r#"{"pushes": 1}"#, "pushes"),
            (
                "queen_front:1",
                "h",
                r#"{"pop_message_count": 1.5}"#,
                "pop_message_count",
            ),
            (
                "queen_front:1",
                "h",
                r#"{"ack_failed_count": "1"}"#,
                "ack_failed_count",
            ),
            (
                "queen_front:1",
                "h",
                r#"{"dlq_count": 1000000000001}"#,
                "dlq_count",
            ),
            ("queen_front:1", "h", r#"{"pid": 3000000000}"#, "pid"),
            ("queen_front:1", "h", r#"{"lag_sum_ms": 1}"#, "lag_sum_ms"),
            ("queen_front:1", "h", "[]", "figures"),
            ("", "h", "{}", "worker_id"),
            ("queen_front:1", " ", "{}", "hostname"),
            ("queen_ext", "h", "{}", "worker_id"),
        ] {
            let got = refusal(worker, host, figures);
            assert!(got.starts_with("22023: "), "{figures}: {got}");
            assert!(got.contains(names), "{figures}: {got}");
        }
        // A good key beside a bad one writes nothing either.
        let got = refusal(
            "queen_front:1",
            "h",
            r#"{"push_request_count": 5, "push_message_count": -5}"#,
        );
        assert!(got.starts_with("22023: push_message_count"), "{got}");
        let long = "x".repeat(256);
        assert!(refusal(&long, "h", "{}").starts_with("22001"));
        assert_eq!(
            n("SELECT count(*) FROM queen.worker_metrics WHERE worker_id <> 'queen_ext'"),
            0
        );
    }

    #[pg_test]
    fn an_application_may_not_report() {
        let may = |role: &str| {
            Spi::get_one_with_args::<bool>(
                "SELECT has_function_privilege($1,
                   'queen.front_metrics_report(text, text, jsonb)', 'EXECUTE')",
                &[role.into()],
            )
            .unwrap()
            .unwrap()
        };
        assert!(!may("queen_app"));
        assert!(!may("pg_monitor"));
        assert!(may("queen_admin"));
    }
}
