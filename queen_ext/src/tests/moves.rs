//! Dead-letter moves and Queen-shaped consumer-group reads inside
//! PostgreSQL: a move puts the message back once and removes its row, a
//! second move of the same row finds nothing, a move after its queue was
//! deleted finds nothing, and the purge counts what it removes.

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
}
