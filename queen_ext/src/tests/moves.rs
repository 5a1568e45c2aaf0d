//! Dead-letter moves and Queen-shaped consumer-group reads inside
//! PostgreSQL: a move puts the message back once and removes its row, a
//! second move of the same row finds nothing, a move after its queue was
//! deleted finds nothing, and the purge counts what it removes; the one
//! name of each read and move carries what its deprecated twin answered.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::engine::dlq;
    use crate::pg::spi;
    use crate::tests::support::{js, n};

    /// Pushes `count` messages to `queue` and dead-letters them in queue
    /// mode; answers the dead-letter row ids, oldest first.
    fn dead_letters(queue: &str, count: usize) -> Vec<i64> {
        let items: Vec<Value> = (0..count)
            .map(|i| json!({"queue": queue, "payload": {"n": i}, "transactionId": format!("{queue}-{i}")}))
            .collect();
        Spi::get_one_with_args::<Json>(
            "SELECT queen.push($1)",
            &[JsonB(Value::Array(items)).into()],
        )
        .unwrap();
        let popped = Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, NULL, NULL, $2, '{}')",
            &[queue.into(), (count as i32).into()],
        )
        .unwrap()
        .unwrap()
        .0;
        let acks: Vec<Value> = popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                            "leaseId": m["leaseId"], "status": "dlq", "error": "failed"})
            })
            .collect();
        Spi::get_one_with_args::<Json>("SELECT queen.ack($1)", &[JsonB(Value::Array(acks)).into()])
            .unwrap();
        let page = Spi::get_one_with_args::<Json>(
            "SELECT queen.dlq_list(jsonb_build_object('queue', $1::text))",
            &[queue.into()],
        )
        .unwrap()
        .unwrap()
        .0;
        let mut ids: Vec<i64> = page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().parse().unwrap())
            .collect();
        ids.sort();
        ids
    }

    fn move_back(id: i64) -> Option<Value> {
        spi::spi(|c| dlq::move_back(c, id, &dlq::MoveTo::default()).map(|m| m.to_json()))
    }

    #[pg_test]
    fn a_move_puts_the_message_back_once_and_removes_its_row() {
        let ids = dead_letters("mv1", 2);
        let moved = move_back(ids[0]).expect("the row is there");
        assert_eq!(moved["result"], "moved");
        assert_eq!(moved["dlqRowRemoved"], true);
        assert_eq!(moved["originalTransactionId"], "mv1-0");
        assert_eq!(
            moved["replayedAs"]["transaction_id"],
            format!("dlq:{}", ids[0])
        );
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_dlq WHERE id = {}",
                ids[0]
            )),
            0
        );
        assert!(move_back(ids[0]).is_none(), "a second move finds nothing");
        let popped = js("SELECT queen.pop('mv1', NULL, NULL, 10, '{}')");
        let data: Vec<&Value> = popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["data"])
            .collect();
        assert_eq!(
            data,
            vec![&json!({"n": 0})],
            "delivered once, the other stays dead"
        );
        assert_eq!(
            js("SELECT queen.dlq_list('{\"queue\": \"mv1\"}')")["total"],
            1
        );
    }

    #[pg_test]
    fn a_move_after_its_queue_was_deleted_finds_nothing() {
        let ids = dead_letters("mv2", 1);
        js("SELECT queen.delete_queue('mv2')");
        assert!(move_back(ids[0]).is_none());
        assert_eq!(
            n("SELECT count(*) FROM queen.queues WHERE name = 'mv2'"),
            0,
            "the move did not create the queue again"
        );
        let gone = js("SELECT queen.delete_queue_if_exists('mv2')");
        assert_eq!(gone["existed"], false);
        assert_eq!(gone["deleted"], false);
    }

    #[pg_test]
    fn a_replay_into_another_partition_and_the_message_retry() {
        let ids = dead_letters("mv3", 2);
        let r = Spi::get_one_with_args::<Json>(
            "SELECT queen.dlq_replay($1, '{\"partition\": \"again\"}')",
            &[ids[1].into()],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(r["partition"], "again");
        let pid: i64 = n(
            "SELECT id FROM queen.log_partitions WHERE name = 'Default' \
                          AND queue_id = (SELECT id FROM queen.queues WHERE name = 'mv3')",
        );
        let r = Spi::get_one_with_args::<Json>(
            "SELECT queen.dlq_retry_message($1, 'mv3-0')",
            &[pid.into()],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(r["result"], "moved");
        assert_eq!(r["partition"], "Default");
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq"), 0);
    }

    #[pg_test(error = "dead letter \"-1\" does not exist")]
    fn replaying_an_unknown_row_is_refused() {
        js("SELECT queen.dlq_replay(-1)");
    }

    #[pg_test]
    fn the_purge_counts_what_it_removes() {
        dead_letters("mv4", 3);
        let r = js("SELECT queen.dlq_purge('mv4')");
        assert_eq!(r["deleted"], 3);
        assert_eq!(r["pruned_failed_count"], 3);
        assert_eq!(js("SELECT queen.queue_counts('mv4')")["pruned_failed"], 3);
        let none = js("SELECT queen.dlq_purge('no-such-queue')");
        assert_eq!(none["deleted"], 0);
        assert_eq!(
            js("SELECT queen.dlq_list('{\"queue\": \"no-such-queue\"}')")["total"],
            0
        );
    }

    #[pg_test]
    fn the_groups_summary_lists_queue_mode_and_a_group_with_lag() {
        js("SELECT queen.push('[{\"queue\": \"cg1\", \"payload\": 1}, {\"queue\": \"cg1\", \"payload\": 2}]')");
        js("SELECT queen.pop('cg1', NULL, 'g', 1, '{}')");
        js("SELECT queen.pop('cg1', NULL, NULL, 1, '{}')");
        let all = js("SELECT queen.consumer_groups_summary()");
        let mine: Vec<&Value> = all
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["queueName"] == "cg1")
            .collect();
        let names: Vec<&Value> = mine.iter().map(|g| &g["name"]).collect();
        assert_eq!(names, vec![&json!("__QUEUE_MODE__"), &json!("g")]);
        assert_eq!(mine[1]["totalLag"], 2);
        assert_eq!(mine[1]["members"], 1, "its lease is live");
        assert_eq!(mine[1]["state"], "Dead", "nothing consumed yet");
        let lagging = js("SELECT queen.consumer_groups_lagging(0)");
        assert!(lagging
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["consumer_group"] == "g"));
        assert_eq!(
            js("SELECT queen.consumer_group_detail('nobody')"),
            json!({})
        );
    }

    #[pg_test(error = "options: Must specify toEnd=true or a timestamp")]
    fn a_seek_without_a_target_is_refused() {
        js("SELECT queen.push('[{\"queue\": \"cg2\", \"payload\": 1}]')");
        js("SELECT queen.consumer_group_seek_queue('g', 'cg2', '{}')");
    }

    #[pg_test]
    fn queue_mode_dead_letters_are_listed_and_purged_by_the_name_they_are_shown_with() {
        dead_letters("qm-dl", 2);
        let page = Spi::get_one::<Json>(
            "SELECT queen.dlq_list('{\"queue\": \"qm-dl\", \"consumerGroup\": \"__QUEUE_MODE__\"}')",
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(page["messages"].as_array().unwrap().len(), 2, "{page}");
        assert_eq!(page["messages"][0]["consumerGroup"], "__QUEUE_MODE__");
        let other = Spi::get_one::<Json>(
            "SELECT queen.dlq_list('{\"queue\": \"qm-dl\", \"consumerGroup\": \"billing\"}')",
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(other["messages"].as_array().unwrap().len(), 0, "{other}");
        let purged = js("SELECT queen.dlq_purge('qm-dl', '__QUEUE_MODE__')");
        assert_eq!(purged["deleted"], 2, "{purged}");
        assert_eq!(
            n("SELECT count(*) FROM queen.log_dlq d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = 'qm-dl'"),
            0
        );
    }

    /// The (group, queue) entry of `consumer_groups_list()`'s answer.
    fn listed<'a>(list: &'a Value, group: &str, queue: &str) -> &'a Value {
        let entries: Vec<&Value> = if group == "__QUEUE_MODE__" {
            list["queueMode"].as_array().unwrap().iter().collect()
        } else {
            list["consumerGroups"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|g| g["consumerGroup"] == group)
                .flat_map(|g| g["queues"].as_array().unwrap())
                .collect()
        };
        entries
            .into_iter()
            .find(|q| q["queue"] == queue)
            .unwrap_or_else(|| panic!("{group} on {queue} in {list}"))
    }

    #[pg_test]
    fn the_group_list_carries_what_the_summary_said() {
        js("SELECT queen.push('[{\"queue\": \"cg3\", \"payload\": 1}, {\"queue\": \"cg3\", \"payload\": 2}]')");
        js("SELECT queen.pop('cg3', NULL, 'g', 1, '{}')");
        js("SELECT queen.pop('cg3', NULL, NULL, 1, '{}')");
        let popped = js("SELECT queen.pop('cg3', NULL, 'h', 1, '{}')");
        crate::tests::support::ack_all(&popped, "completed", Some("h"));
        let list = js("SELECT queen.consumer_groups_list()");
        let summary = js("SELECT queen.consumer_groups_summary()");
        let rows: Vec<&Value> = summary
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["queueName"] == "cg3")
            .collect();
        assert_eq!(rows.len(), 3, "{summary}");
        for r in rows {
            let e = listed(&list, r["name"].as_str().unwrap(), "cg3");
            for (theirs, ours) in [
                ("members", "members"),
                ("partitionCursors", "partitions"),
                ("partitionsWithLag", "partitionsWithLag"),
                ("totalLag", "lag"),
                ("maxTimeLag", "maxTimeLag"),
                ("state", "state"),
                ("subscriptionMode", "subscriptionMode"),
                ("subscriptionTimestamp", "subscriptionTimestamp"),
                ("subscriptionCreatedAt", "subscriptionCreatedAt"),
                ("conflation", "conflation"),
            ] {
                assert_eq!(r[theirs], e[ours], "{theirs} of {r} against {e}");
            }
        }
        assert_eq!(listed(&list, "h", "cg3")["state"], "Stable");
        assert_eq!(listed(&list, "g", "cg3")["members"], 1);
        let groups = list["consumerGroups"].as_array().unwrap();
        assert!(groups
            .iter()
            .all(|g| g["consumerGroup"] != "__QUEUE_MODE__"));
        assert_eq!(list["total"], groups.len());
    }

    #[pg_test]
    fn the_group_read_carries_what_the_detail_said() {
        js("SELECT queen.push('[{\"queue\": \"cg4\", \"partition\": \"a\", \"payload\": 1}, {\"queue\": \"cg4\", \"partition\": \"b\", \"payload\": 2}]')");
        let popped = js("SELECT queen.pop('cg4', 'a', 'g', 1, '{}')");
        crate::tests::support::ack_all(&popped, "completed", Some("g"));
        js("SELECT queen.pop('cg4', 'b', 'g', 1, '{}')");
        let got = js("SELECT queen.consumer_group_get('g')");
        let detail = js("SELECT queen.consumer_group_detail('g')");
        let parts = got["partitions"].as_array().unwrap();
        assert_eq!(parts.len(), 2, "{got}");
        for p in parts {
            let queue = p["queue"].as_str().unwrap();
            let theirs = detail[queue]["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["partitionId"] == p["partitionId"])
                .unwrap_or_else(|| panic!("{p} in {detail}"));
            for (t, o) in [
                ("committedOffset", "committedOffset"),
                ("lastOffset", "lastOffset"),
                ("offsetLag", "lag"),
                ("leaseActive", "leased"),
                ("timeLagSeconds", "timeLagSeconds"),
                ("partition", "partition"),
            ] {
                assert_eq!(theirs[t], p[o], "{t} of {theirs} against {p}");
            }
            assert_eq!(detail[queue]["conflation"], p["conflation"]);
        }
        let leased: Vec<&Value> = parts.iter().filter(|p| p["leased"] == true).collect();
        assert_eq!(leased.len(), 1, "b's lease is live: {got}");
    }

    #[pg_test]
    fn the_seek_answers_what_the_queue_seek_said() {
        js("SELECT queen.push('[{\"queue\": \"cg5\", \"partition\": \"a\", \"payload\": 1}, {\"queue\": \"cg5\", \"partition\": \"b\", \"payload\": 2}]')");
        for options in [
            json!({"toEnd": true}),
            json!({"position": "beginning"}),
            json!({"timestamp": "2000-01-01T00:00:00Z"}),
        ] {
            let one = Spi::get_one_with_args::<Json>(
                "SELECT queen.consumer_group_seek('g', 'cg5', $1)",
                &[JsonB(options.clone()).into()],
            )
            .unwrap()
            .unwrap()
            .0;
            let theirs = Spi::get_one_with_args::<Json>(
                "SELECT queen.consumer_group_seek_queue('g', 'cg5', $1)",
                &[JsonB(options.clone()).into()],
            )
            .unwrap()
            .unwrap()
            .0;
            assert_eq!(one["partitions"], theirs["partitionsUpdated"], "{options}");
            assert_eq!(one["partitions"], 2, "{options}: {one}");
            assert_eq!(one["seekToEnd"], theirs["seekToEnd"], "{options}");
            assert_eq!(
                one["targetTimestamp"], theirs["targetTimestamp"],
                "{options}"
            );
            assert_eq!(one["queue"], "cg5");
        }
        // After a seek to the beginning both messages are read again.
        js("SELECT queen.consumer_group_seek('g', 'cg5', '{\"position\": \"beginning\"}')");
        let popped = js("SELECT queen.pop('cg5', NULL, 'g', 10, '{}')");
        let read = popped["messages"].as_array().unwrap().len();
        let popped = js("SELECT queen.pop('cg5', NULL, 'g', 10, '{}')");
        assert_eq!(read + popped["messages"].as_array().unwrap().len(), 2);
        // A queue with no partition yet: nothing to move, and no error.
        js("SELECT queen.configure('cg5-empty')");
        let none = js("SELECT queen.consumer_group_seek('g', 'cg5-empty', '{\"toEnd\": true}')");
        assert_eq!(none["partitions"], 0, "{none}");
    }

    #[pg_test]
    fn the_overview_carries_what_the_queen_overview_said() {
        js("SELECT queen.push('[{\"queue\": \"ov1\", \"payload\": 1}, {\"queue\": \"ov1\", \"payload\": 2}]')");
        js("SELECT queen.configure('ov2', '{\"namespace\": \"ovn\", \"task\": \"ovt\"}')");
        js("SELECT queen.pop('ov1', NULL, 'g', 1, '{}')");
        dead_letters("ov3", 1);
        let one = js("SELECT queen.overview()");
        let theirs = js("SELECT queen.system_overview()");
        assert_eq!(one["counts"], theirs["messages"], "{one} {theirs}");
        for key in ["queues", "partitions", "namespaces", "tasks", "statsAge"] {
            assert_eq!(one[key], theirs[key], "{key}");
        }
        assert_eq!(one["lag"]["offset"], theirs["lag"]["offset"]);
        assert!(one["throughput"]["ingestedPerSecond"].is_number(), "{one}");
        assert!(one["timestamp"].is_string(), "{one}");
        assert_eq!(one["failed"], n("SELECT count(*) FROM queen.log_dlq"));
        assert_eq!(one["messages"].as_i64().unwrap(), {
            let listed = js("SELECT queen.queues_list()");
            listed["queues"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| q["messages"].as_i64().unwrap())
                .sum::<i64>()
        });
    }

    #[pg_test]
    fn the_queue_retry_is_the_bulk_retry_by_its_one_name() {
        dead_letters("rq1", 2);
        let r = js("SELECT queen.dlq_retry_queue('rq1')");
        assert_eq!(r["retried"].as_array().unwrap().len(), 2, "{r}");
        assert_eq!(r["matched"], 2);
        assert_eq!(
            n("SELECT count(*) FROM queen.log_dlq d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = 'rq1'"),
            0
        );
        let popped = js("SELECT queen.pop('rq1', NULL, NULL, 10, '{}')");
        assert_eq!(popped["messages"].as_array().unwrap().len(), 2, "{popped}");
    }
}
