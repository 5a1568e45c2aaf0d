//! Failure tests inside PostgreSQL: dead letters survive segment reclaim,
//! DLQ retention above its floor, counted loss, retry and delete.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::tests::support::{js, n};

    /// Pushes `count` messages and dead-letters all of them for `group`.
    fn dead_letters(queue: &str, group: &str, count: usize) -> Vec<Value> {
        let items: Vec<Value> = (0..count).map(|i| json!({"queue": queue, "payload": {"n": i}, "transactionId": format!("{queue}-{i}")})).collect();
        Spi::get_one_with_args::<Json>(
            "SELECT queen.push($1)",
            &[JsonB(Value::Array(items)).into()],
        )
        .unwrap();
        let popped = Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, NULL, $2, $3, '{}')",
            &[queue.into(), group.into(), (count as i32).into()],
        )
        .unwrap()
        .unwrap()
        .0;
        let msgs = popped["messages"].as_array().unwrap().clone();
        let acks: Vec<Value> = msgs
            .iter()
            .map(|m| json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"],
                            "consumerGroup": group, "status": "dlq", "error": "handler failed"}))
            .collect();
        Spi::get_one_with_args::<Json>("SELECT queen.ack($1)", &[JsonB(Value::Array(acks)).into()])
            .unwrap();
        msgs
    }

    fn age_everything(age: &str) {
        Spi::run(&format!(
            "UPDATE queen.log_segments SET created_at = created_at - interval '{age}';
             UPDATE queen.log_partitions SET oldest_live_at = oldest_live_at - interval '{age}';
             UPDATE queen.log_dlq SET failed_at = failed_at - interval '{age}';"
        ))
        .unwrap();
    }

    #[pg_test]
    fn a_dead_letter_reads_back_the_same_after_its_segment_is_reclaimed() {
        js("SELECT queen.configure('f1', '{\"retentionEnabled\": true, \"retentionSeconds\": 60}')");
        let msgs = dead_letters("f1", "g", 2);
        age_everything("2 hours");
        let before = js("SELECT queen.dlq_messages('{\"queue\": \"f1\"}')");
        assert_eq!(before["total"], 2);
        assert_eq!(
            n("SELECT count(*) FROM queen.log_dlq WHERE created_at IS NULL"),
            2
        );
        js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(
            n("SELECT count(*) FROM queen.log_segments"),
            0,
            "the segment is gone"
        );
        assert_eq!(
            n("SELECT count(*) FROM queen.log_dlq WHERE created_at IS NOT NULL"),
            2,
            "carried forward"
        );
        let after = js("SELECT queen.dlq_messages('{\"queue\": \"f1\"}')");
        let strip = |v: &Value| {
            let mut v = v.clone();
            for m in v["messages"].as_array_mut().unwrap() {
                m.as_object_mut().unwrap().remove("failedAt");
            }
            v
        };
        assert_eq!(strip(&after), strip(&before));
        // And it can be retried: the message is pushed again and readable.
        let m = &msgs[0];
        let r = Spi::get_one_with_args::<Json>(
            "SELECT queen.retry_dlq_message($1, $2)",
            &[
                m["partitionId"]
                    .as_str()
                    .unwrap()
                    .parse::<i64>()
                    .unwrap()
                    .into(),
                m["transactionId"].as_str().unwrap().into(),
            ],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(r["matched"], 1);
        assert_eq!(r["retried"].as_array().unwrap().len(), 1);
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq"), 1);
        let again = js("SELECT queen.pop('f1', NULL, 'fresh', 10, '{}')");
        assert_eq!(again["messages"][0]["data"], m["data"]);
        assert_eq!(again["messages"][0]["transactionId"], m["transactionId"]);
    }

    #[pg_test]
    fn dlq_retention_keeps_the_floor_and_counts_what_it_drops() {
        js("SELECT queen.configure('f2', '{\"dlqRetentionSeconds\": 60}')");
        dead_letters("f2", "g", 3);
        age_everything("2 hours");
        // Past the queue's 60 s but inside the 72 h floor: kept.
        let r = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(r["dlq_pruned"], 0);
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq"), 3);
        // Past the floor too: purged and counted.
        age_everything("3 days");
        let r = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(r["dlq_pruned"], 3, "{r}");
        let counts = js("SELECT queen.queue_counts('f2')");
        assert_eq!(counts["failed"], 0);
        assert_eq!(counts["pruned_failed"], 3);
        assert_eq!(counts["failed_total"], 3);
        // A queue that did not opt in keeps its dead letters forever.
        dead_letters("f3", "g", 1);
        age_everything("30 days");
        js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = 'f3'"), 1);
    }

    #[pg_test]
    fn the_floor_can_be_lowered_and_removed() {
        js("SELECT queen.configure('f4', '{\"dlqRetentionSeconds\": 60}')");
        dead_letters("f4", "g", 2);
        age_everything("2 hours");
        Spi::run("SET queen.failed_retention = '1h'").unwrap();
        let r = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(r["dlq_pruned"], 2);
        assert_eq!(js("SELECT queen.queue_counts('f4')")["pruned_failed"], 2);
    }

    #[pg_test]
    fn retry_by_queue_reports_matched_and_retried() {
        dead_letters("f5", "a", 2);
        dead_letters("f5", "b", 1);
        let r = js("SELECT queen.retry_failed_by_queue('f5', 'a')");
        assert_eq!(r["matched"], 2);
        assert_eq!(r["retried"].as_array().unwrap().len(), 2);
        assert_eq!(r["pruned_failed_count"], 0);
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq"), 1);
        let all = js("SELECT queen.retry_failed_by_queue('f5')");
        assert_eq!(all["matched"], 1);
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq"), 0);
    }

    #[pg_test]
    fn delete_one_dead_letter() {
        let msgs = dead_letters("f6", "g", 2);
        let pid: i64 = msgs[0]["partitionId"].as_str().unwrap().parse().unwrap();
        let r = Spi::get_one_with_args::<Json>(
            "SELECT queen.delete_dlq_message($1, $2)",
            &[
                pid.into(),
                msgs[0]["transactionId"].as_str().unwrap().into(),
            ],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(r["deleted"], 1);
        let left =
            js("SELECT queen.dlq_messages('{\"queue\": \"f6\", \"limit\": 1, \"offset\": 0}')");
        assert_eq!(left["total"], 1);
        assert_eq!(
            left["messages"][0]["transactionId"],
            msgs[1]["transactionId"]
        );
        assert_eq!(
            left["messages"][0]["data"], msgs[1]["data"],
            "a narrow row is read through its frame"
        );
    }

    #[pg_test(error = "dead letter \"1/nope\" does not exist")]
    fn deleting_an_unknown_dead_letter_is_refused() {
        js("SELECT queen.delete_dlq_message(1, 'nope')");
    }
}
