//! Engine tests that run inside PostgreSQL (`cargo pgrx test`). Each runs in
//! one transaction; behaviour that needs several sessions or the clock to
//! move is covered by the integration tests under `tests/`.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::tests::support::{ack, ack_all, datas, js, n, push};

    fn pop(queue: &str, group: Option<&str>, batch: i32, options: Value) -> Value {
        Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, NULL, $2, $3, $4)",
            &[
                queue.into(),
                group.into(),
                batch.into(),
                JsonB(options).into(),
            ],
        )
        .unwrap()
        .unwrap()
        .0
    }

    #[pg_test]
    fn options_json_round_trip_covers_every_column() {
        use crate::catalog::options::{columns, QueueOptions};
        let o = QueueOptions {
            lease_time: 5,
            namespace: Some("ns".into()),
            ..Default::default()
        };
        let j = o.to_json();
        assert_eq!(j.as_object().unwrap().len(), columns().len());
        for (key, column) in columns() {
            assert!(j.get(key.as_str()).is_some(), "{key}");
            let sql = format!(
                "SELECT count(*) FROM pg_attribute
                  WHERE attrelid = 'queen.queues'::regclass AND attname = '{column}'"
            );
            assert_eq!(n(&sql), 1, "{column} is a column of queen.queues");
        }
        assert_eq!(QueueOptions::from_json(&j), o);
    }

    #[pg_test]
    fn push_then_pop_in_order() {
        let items: Vec<Value> = (0..5)
            .map(|i| json!({"queue": "orders", "payload": {"n": i}}))
            .collect();
        let res = push(Value::Array(items));
        let res = res.as_array().unwrap();
        assert_eq!(res.len(), 5);
        for (i, r) in res.iter().enumerate() {
            assert_eq!(r["status"], "queued");
            assert_eq!(r["offset"], i as i64);
            assert_eq!(r["partition"], "Default");
        }
        // One segment for one push into one partition.
        assert_eq!(n("SELECT count(*) FROM queen.log_segments"), 1);
        assert_eq!(n("SELECT count(*) FROM queen.log_txns"), 1);
        let popped = pop("orders", None, 3, json!({}));
        assert_eq!(
            datas(&popped),
            vec![json!({"n":0}), json!({"n":1}), json!({"n":2})]
        );
        let m = &popped["messages"][0];
        assert_eq!(m["offset"], 0);
        assert_eq!(m["deliveryAttempt"], 1);
        assert!(m["leaseId"].is_string());
        assert_eq!(
            m["transactionId"], m["id"],
            "a minted transaction id is the message id's text"
        );
    }

    #[pg_test]
    fn a_pop_batch_spans_many_small_segments_and_resumes_mid_segment() {
        // 150 single-message segments: a batch of 120 reads past the segments
        // one scan looks at, in order, and stops at the batch.
        for i in 0..150 {
            push(json!([{"queue": "small", "payload": {"n": i}}]));
        }
        assert_eq!(n("SELECT count(*) FROM queen.log_segments"), 150);
        let first = pop("small", None, 120, json!({"autoAck": true}));
        let want: Vec<Value> = (0..120).map(|i| json!({"n": i})).collect();
        assert_eq!(datas(&first), want);
        let rest = pop("small", None, 120, json!({"autoAck": true}));
        let want: Vec<Value> = (120..150).map(|i| json!({"n": i})).collect();
        assert_eq!(datas(&rest), want);
        // One segment of ten: a batch that ends inside it, and the next batch
        // starting where the first ended.
        let items: Vec<Value> = (0..10)
            .map(|i| json!({"queue": "big", "payload": {"n": i}}))
            .collect();
        push(Value::Array(items));
        let head = pop("big", None, 3, json!({"autoAck": true}));
        assert_eq!(
            datas(&head),
            vec![json!({"n":0}), json!({"n":1}), json!({"n":2})]
        );
        let tail = pop("big", None, 100, json!({"autoAck": true}));
        let want: Vec<Value> = (3..10).map(|i| json!({"n": i})).collect();
        assert_eq!(datas(&tail), want);
        assert_eq!(tail["messages"][0]["offset"], 3);
    }

    #[pg_test]
    fn pushes_to_one_and_to_several_partitions_share_the_offsets() {
        // The first push creates the partition, later ones find it; a push to
        // two partitions locks both. Offsets run on without a gap either way.
        let mut offsets = Vec::new();
        for i in 0..3 {
            let r = push(json!([{"queue": "mix", "payload": i}, {"queue": "mix", "payload": i}]));
            offsets.extend(
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x["offset"].as_i64().unwrap()),
            );
            let r = push(
                json!([{"queue": "mix", "payload": i}, {"queue": "mix", "partition": "other", "payload": i}]),
            );
            offsets.push(r[0]["offset"].as_i64().unwrap());
            assert_eq!(r[1]["offset"], i);
        }
        assert_eq!(offsets, (0..9).collect::<Vec<i64>>());
        assert_eq!(
            n("SELECT COALESCE(t.end_offset, p.log_start - 1) FROM queen.log_partitions p \
               LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s \
               WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true WHERE p.name = 'Default'"),
            8
        );
        assert_eq!(n("SELECT count(*) FROM queen.log_txns t JOIN queen.log_segments s USING (partition_id, base_offset)"), 9);
    }

    #[pg_test]
    fn ack_text_answers_as_ack_does() {
        push(json!([{"queue": "at", "payload": 1}, {"queue": "at", "payload": 2}]));
        let popped = pop("at", None, 2, json!({}));
        let m = &popped["messages"];
        let one = json!([{"transactionId": m[0]["transactionId"], "partitionId": m[0]["partitionId"], "leaseId": m[0]["leaseId"]}]);
        let by_text =
            Spi::get_one_with_args::<Json>("SELECT queen.ack_text($1)", &[one.to_string().into()])
                .unwrap()
                .unwrap()
                .0;
        assert_eq!(by_text[0]["success"], true);
        let two = json!([{"transactionId": m[1]["transactionId"], "partitionId": m[1]["partitionId"], "leaseId": m[1]["leaseId"]}]);
        let by_jsonb = ack(two);
        assert_eq!(by_jsonb[0]["success"], true);
        assert_eq!(n("SELECT committed FROM queen.log_consumers"), 1);
    }

    #[pg_test]
    fn typed_ack_reading_agrees_with_the_value_tree() {
        use crate::wire::ack::{parse_acks, parse_typed};
        let lease = "0192d4c1-7a3b-7cde-8f01-23456789abcd";
        let taken = [
            json!([{"transactionId": "t1", "partitionId": 7}]),
            json!([{"transactionId": "t\"2\\ é", "partitionId": "12", "status": "failed", "error": "boom\n", "leaseId": lease},
               {"transactionId": "t3", "partitionId": 9, "status": "success", "leaseId": "", "consumerGroup": "g"},
               {"transactionId": "t4", "partitionId": "-3", "status": "retry", "leaseId": null, "error": null, "extra": [1]},
               {"transactionId": "t5", "partitionId": 9223372036854775807_i64, "status": "dlq"}]),
            json!({"acknowledgments": [{"transactionId": "a", "partitionId": 1}, {"transactionId": "b", "partitionId": 2, "consumerGroup": "own"}],
               "consumerGroup": "body"}),
            json!({"acknowledgments": [{"transactionId": "a", "partitionId": 1, "status": null}], "consumerGroup": null}),
        ];
        for body in &taken {
            assert_eq!(
                parse_typed(&body.to_string()),
                Some(parse_acks(body)),
                "{body}"
            );
        }
        // What the typed pass leaves to the tree, which names the fault (or, for
        // a lone ack object, reads it).
        let left = [
            json!([]),
            json!({"transactionId": "t", "partitionId": 1}),
            json!([{"partitionId": 1}]),
            json!([{"transactionId": "", "partitionId": 1}]),
            json!([{"transactionId": "t"}]),
            json!([{"transactionId": "t", "partitionId": 1.5}]),
            json!([{"transactionId": "t", "partitionId": "x1"}]),
            json!([{"transactionId": "t", "partitionId": 1, "status": "nah"}]),
            json!([{"transactionId": "t", "partitionId": 1, "status": 3}]),
            json!([{"transactionId": "t", "partitionId": 1, "leaseId": "zzz"}]),
            json!([{"transactionId": "t", "partitionId": 1, "consumerGroup": ""}]),
            json!([{"transactionId": 5, "partitionId": 1}]),
            json!(["t"]),
            json!({"acknowledgments": null}),
        ];
        for body in &left {
            assert_eq!(parse_typed(&body.to_string()), None, "{body}");
        }
        assert_eq!(
            parse_typed("[{\"transactionId\": \"t\", \"partitionId\": 1, \"partitionId\": 2}]"),
            None,
            "a repeated key"
        );
        assert_eq!(
            parse_typed("[{\"transactionId\": \"t\", \"partitionId\": -0}]"),
            None,
            "minus zero"
        );
    }

    #[pg_test]
    fn a_pop_answer_carries_every_field() {
        let pushed = Spi::get_one_with_args::<Json>(
        "SELECT queen.push($1, 'svc \"b\"')",
        &[JsonB(json!([{"queue": "fields", "partition": "p \"ü\"", "transactionId": "tx\\1",
                        "traceId": "0192d4c1-7a3b-7cde-8f01-23456789abcd", "payload": {"k": [1, "two", null]}}])).into()],
    )
    .unwrap()
    .unwrap()
    .0;
        let p = pop("fields", Some("grp"), 5, json!({}));
        assert_eq!(p["success"], true);
        assert_eq!(p["queue"], "fields");
        assert_eq!(p["partition"], "p \"ü\"");
        assert_eq!(p["partitionId"], pushed[0]["partitionId"]);
        assert_eq!(p["consumerGroup"], "grp");
        assert_eq!(p["partitionsClaimed"], 1);
        assert!(p["leaseId"].is_string());
        let m = &p["messages"][0];
        let created = m["createdAt"].as_str().unwrap();
        assert_eq!(
            (created.len(), &created[10..11], &created[23..]),
            (24, "T", "Z"),
            "{created}"
        );
        let expected = json!({
            "id": pushed[0]["messageId"], "transactionId": "tx\\1", "traceId": "0192d4c1-7a3b-7cde-8f01-23456789abcd",
            "data": {"k": [1, "two", null]}, "producerSub": "svc \"b\"", "createdAt": created, "queue": "fields",
            "partition": "p \"ü\"", "partitionId": pushed[0]["partitionId"], "offset": 0, "leaseId": p["leaseId"],
            "consumerGroup": "grp", "deliveryAttempt": 1, "retryCount": 0,
        });
        assert_eq!(m, &expected);
        // Queue mode answers no group; an auto-acked pop no lease; an empty pop
        // names nothing.
        push(json!([{"queue": "fields2", "payload": 2}]));
        let auto = pop("fields2", None, 5, json!({"autoAck": true}));
        assert_eq!(
            (auto["consumerGroup"].clone(), auto["leaseId"].clone()),
            (Value::Null, Value::Null)
        );
        assert_eq!(
            (
                auto["messages"][0]["consumerGroup"].clone(),
                auto["messages"][0]["leaseId"].clone()
            ),
            (Value::Null, Value::Null)
        );
        assert_eq!(auto["messages"][0]["traceId"], Value::Null);
        assert_eq!(auto["messages"][0]["producerSub"], Value::Null);
        let empty = pop("fields2", None, 5, json!({}));
        assert_eq!(
            empty,
            json!({"success": true, "queue": null, "partition": null, "partitionId": null, "leaseId": empty["leaseId"],
                             "consumerGroup": null, "partitionsClaimed": 0, "messages": []})
        );
    }

    #[pg_test(error = "acks: malformed JSON: EOF while parsing a list at line 1 column 1")]
    fn malformed_ack_text_is_refused() {
        Spi::get_one_with_args::<Json>("SELECT queen.ack_text($1)", &["[".into()]).unwrap();
    }

    /// A lease covers what the segments hold, not what the partition's offsets
    /// promise: a batch starts where the segments do when the head of the range
    /// is gone, and a pop that finds no segment answers empty and leaves the
    /// cursor unleased.
    #[pg_test]
    fn a_lease_covers_the_segments_read() {
        let cursor = |pid: i64| {
            js(&format!(
            "SELECT json_build_array(committed, lease_id IS NOT NULL, lease_start, lease_end, length(lease_state), head_attempts)
               FROM queen.log_consumers WHERE partition_id = {pid}"
        ))
        };
        // As the partition says: offsets 0..4, all there.
        for i in 0..2 {
            let items: Vec<Value> = (0..5)
                .map(|k| json!({"queue": "ahead", "payload": i * 5 + k}))
                .collect();
            push(Value::Array(items));
        }
        let pid = n("SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'ahead'");
        let first = pop("ahead", None, 3, json!({}));
        assert_eq!(datas(&first), vec![json!(0), json!(1), json!(2)]);
        assert_eq!(cursor(pid), json!([-1, true, 0, 2, 3, 1]));
        ack_all(&first, "completed", None);
        // The first segment's remaining offsets (3, 4) are gone while the log
        // start still points at them: the batch starts where the segments do.
        Spi::run(&format!(
            "DELETE FROM queen.log_segments WHERE partition_id = {pid} AND base_offset = 0"
        ))
        .unwrap();
        let second = pop("ahead", None, 100, json!({}));
        assert_eq!(
            datas(&second),
            (5..10).map(|v| json!(v)).collect::<Vec<_>>()
        );
        assert_eq!(second["messages"][0]["offset"], 5);
        assert_eq!(cursor(pid), json!([4, true, 5, 9, 5, 1]));
        let acked = ack_all(&second, "completed", None);
        assert!(
            acked
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["success"] == true),
            "{acked}"
        );
        assert_eq!(cursor(pid), json!([9, false, null, null, null, 0]));
        // Nothing is left to read although the partition says 10..14 exist: the
        // pop answers empty and leaves the cursor as it found it, unleased.
        let items: Vec<Value> = (10..15)
            .map(|v| json!({"queue": "ahead", "payload": v}))
            .collect();
        push(Value::Array(items));
        Spi::run(&format!(
            "DELETE FROM queen.log_segments WHERE partition_id = {pid}"
        ))
        .unwrap();
        let third = pop("ahead", None, 100, json!({}));
        assert!(third["messages"].as_array().unwrap().is_empty(), "{third}");
        assert_eq!(cursor(pid), json!([9, false, null, null, null, 0]));
    }

    #[pg_test]
    fn leased_partition_is_skipped_and_ack_moves_cursor() {
        let items: Vec<Value> = (0..4)
            .map(|i| json!({"queue": "q", "payload": i}))
            .collect();
        push(Value::Array(items));
        let first = pop("q", None, 2, json!({}));
        assert_eq!(datas(&first), vec![json!(0), json!(1)]);
        // The only partition is leased: another pop of the same group gets nothing.
        let second = pop("q", None, 2, json!({}));
        assert_eq!(second["messages"].as_array().unwrap().len(), 0);
        let acked = ack_all(&first, "completed", None);
        assert!(
            acked
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["success"] == true),
            "{acked}"
        );
        let third = pop("q", None, 10, json!({}));
        assert_eq!(datas(&third), vec![json!(2), json!(3)]);
        // Acking the same message again is harmless.
        let again = ack_all(&first, "completed", None);
        assert!(again
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["success"] == true));
    }

    #[pg_test]
    fn consumer_groups_have_their_own_cursors() {
        push(json!([{"queue": "g", "payload": "a"}, {"queue": "g", "payload": "b"}]));
        let a = pop("g", Some("alpha"), 10, json!({}));
        let b = pop("g", Some("beta"), 10, json!({}));
        assert_eq!(datas(&a), vec![json!("a"), json!("b")]);
        assert_eq!(datas(&b), vec![json!("a"), json!("b")]);
        assert_eq!(a["consumerGroup"], "alpha");
        ack_all(&a, "completed", Some("alpha"));
        assert_eq!(
            n("SELECT committed FROM queen.log_consumers WHERE consumer_group = 'alpha'"),
            1
        );
        assert_eq!(
            n("SELECT committed FROM queen.log_consumers WHERE consumer_group = 'beta'"),
            -1
        );
    }

    #[pg_test]
    fn subscription_mode_new_skips_history() {
        push(json!([{"queue": "s", "payload": "old"}]));
        // Make the history visibly older than the subscription.
        Spi::run("UPDATE queen.log_segments SET created_at = now() - interval '1 hour'").unwrap();
        let none = pop("s", Some("late"), 10, json!({"subscriptionMode": "new"}));
        assert_eq!(none["messages"].as_array().unwrap().len(), 0);
        push(json!([{"queue": "s", "payload": "fresh"}]));
        let got = pop("s", Some("late"), 10, json!({"subscriptionMode": "new"}));
        assert_eq!(datas(&got), vec![json!("fresh")]);
        let all = pop("s", Some("early"), 10, json!({"subscriptionMode": "all"}));
        assert_eq!(datas(&all), vec![json!("old"), json!("fresh")]);
    }

    #[pg_test]
    fn transaction_id_deduplicates() {
        let first = push(json!([{"queue": "d", "payload": 1, "transactionId": "t-1"}]));
        assert_eq!(first[0]["status"], "queued");
        let again = push(json!([
            {"queue": "d", "payload": 1, "transactionId": "t-1"},
            {"queue": "d", "payload": 2, "transactionId": "t-2"},
            {"queue": "d", "payload": 2, "transactionId": "t-2"}
        ]));
        assert_eq!(again[0]["status"], "duplicate");
        assert_eq!(again[0]["offset"], 0);
        assert_eq!(again[0]["messageId"], first[0]["messageId"]);
        assert_eq!(again[1]["status"], "queued");
        assert_eq!(again[2]["status"], "duplicate");
        assert_eq!(again[2]["offset"], again[1]["offset"]);
        assert_eq!(
            n("SELECT sum(frame_count)::int8 FROM queen.log_segments"),
            2
        );
        // Another partition is another log: the same id is not a duplicate there.
        let other =
            push(json!([{"queue": "d", "partition": "p2", "payload": 1, "transactionId": "t-1"}]));
        assert_eq!(other[0]["status"], "queued");
        // A queue with deduplication off stores every copy.
        js("SELECT queen.configure('nodedup', '{\"dedupWindowSeconds\": 0}')");
        push(json!([{"queue": "nodedup", "payload": 1, "transactionId": "x"}]));
        let dup = push(json!([{"queue": "nodedup", "payload": 1, "transactionId": "x"}]));
        assert_eq!(dup[0]["status"], "queued");
    }

    #[pg_test]
    fn lookups_of_caller_ids_read_the_hash_index_and_not_the_partition() {
        // Sidecar rows of 16 partitions with caller ids, and planner statistics
        // for them. The sidecar has no foreign key, so the partitions need not
        // exist.
        Spi::run(
        "INSERT INTO queen.log_txns (partition_id, base_offset, created_at, txn_hashes, dedup_hashes)
         SELECT 1000000 + g % 16, g, now(), h, h
           FROM generate_series(1, 32000) g,
                LATERAL (SELECT array_agg((random() * 9e18)::int8) AS h FROM generate_series(1, 10 + g % 2)) x",
    )
    .unwrap();
        Spi::run("ANALYZE queen.log_txns").unwrap();
        Spi::run("SET LOCAL plan_cache_mode = force_generic_plan").unwrap();
        let hashes: Vec<String> = (0..100)
            .map(|i| crate::engine::push::txn_hash(&format!("wanted-{i}")).to_string())
            .collect();
        let wanted = format!("'{{{}}}'::int8[]", hashes.join(","));
        for (name, types, sql, args) in [
            (
                "probe",
                "int8, int8[], int8, int4",
                crate::engine::push::DEDUP_PROBE,
                format!("1000003, {wanted}, 0, 3600"),
            ),
            (
                "lookup",
                "int8, int8[]",
                crate::engine::ack::SUPPLIED_LOOKUP,
                format!("1000003, {wanted}"),
            ),
        ] {
            Spi::run(&format!("PREPARE {name}({types}) AS {sql}")).unwrap();
            let plan =
                Spi::get_one::<Json>(&format!("EXPLAIN (FORMAT JSON) EXECUTE {name}({args})"))
                    .unwrap()
                    .unwrap()
                    .0
                    .to_string();
            assert!(plan.contains("idx_log_txns_dedup"), "{name}: {plan}");
            assert!(
                !plan.contains("log_txns_pkey"),
                "{name} reads the partition's primary-key range: {plan}"
            );
            Spi::run(&format!("DEALLOCATE {name}")).unwrap();
        }
    }

    #[pg_test]
    fn only_a_queue_with_a_dedup_window_indexes_caller_ids() {
        js("SELECT queen.configure('nowin', '{\"dedupWindowSeconds\": 0}')");
        let indexed = |queue: &str| {
            n(&format!(
            "SELECT count(*) FROM queen.log_txns t JOIN queen.log_partitions p ON p.id = t.partition_id \
               JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '{queue}' AND t.dedup_hashes IS NOT NULL"
        ))
        };
        for queue in ["nowin", "win"] {
            // One partition (one statement), then two partitions (locked first).
            push(json!([{"queue": queue, "payload": 1, "transactionId": "a"}]));
            push(json!([{"queue": queue, "payload": 2, "transactionId": "b"},
                    {"queue": queue, "partition": "p2", "payload": 3, "transactionId": "c"}]));
        }
        assert_eq!(indexed("nowin"), 0, "nothing checks against them");
        assert_eq!(indexed("win"), 3);
        // An ack of a caller's id on the queue without a window, again after the
        // message is done, still finds it and changes nothing.
        let popped = pop("nowin", None, 10, json!({}));
        assert_eq!(datas(&popped), vec![json!(1), json!(2)]);
        ack_all(&popped, "completed", None);
        let again = ack_all(&popped, "completed", None);
        assert!(
            again
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["success"] == true),
            "{again}"
        );
    }

    #[pg_test]
    fn acks_of_an_id_stored_twice_answer_each_copy() {
        // Without a dedup window, the same transaction id can sit at several
        // offsets of one lease; acking what was delivered completes all of it.
        js("SELECT queen.configure('twice', '{\"dedupWindowSeconds\": 0}')");
        for data in [1, 2, 3] {
            push(json!([{"queue": "twice", "payload": data, "transactionId": "T"}]));
        }
        push(json!([{"queue": "twice", "payload": 4, "transactionId": "U"}]));
        let cursor = || {
            n("SELECT committed FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id \
                       JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'twice'")
        };
        let first = pop("twice", None, 10, json!({}));
        assert_eq!(datas(&first), vec![json!(1), json!(2), json!(3), json!(4)]);
        let one = |m: &Value, status: &str| json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": first["leaseId"], "status": status});
        let m = first["messages"].as_array().unwrap();
        // Two acks of T in one call take the first two copies, in order.
        let res = ack(json!([one(&m[0], "completed"), one(&m[1], "completed")]));
        assert!(
            res.as_array().unwrap().iter().all(|r| r["success"] == true),
            "{res}"
        );
        assert_eq!(cursor(), 1);
        // A later ack of T takes the copy still open.
        let res = ack(json!([one(&m[2], "completed")]));
        assert_eq!(res[0]["success"], true, "{res}");
        assert_eq!(cursor(), 2);
        // Acking T again, every copy answered, changes nothing.
        let res = ack(json!([one(&m[0], "completed")]));
        assert_eq!(res[0]["success"], true, "{res}");
        assert_eq!(cursor(), 2);
        ack(json!([one(&m[3], "completed")]));
        assert_eq!(cursor(), 3);
        assert_eq!(
            n("SELECT count(*) FROM queen.log_consumers WHERE lease_id IS NOT NULL"),
            0,
            "the lease ended"
        );
        assert_eq!(
            pop("twice", None, 10, json!({}))["messages"]
                .as_array()
                .unwrap()
                .len(),
            0
        );
    }

    #[pg_test]
    fn configure_merge_keeps_and_replace_resets() {
        let created = js("SELECT queen.configure('c', '{\"leaseTime\": 30, \"retryLimit\": 7}')");
        assert_eq!(created["created"], true);
        assert_eq!(created["options"]["leaseTime"], 30);
        let merged = js("SELECT queen.configure('c', '{\"retentionEnabled\": true}')");
        assert_eq!(merged["options"]["leaseTime"], 30);
        assert_eq!(merged["options"]["retryLimit"], 7);
        assert_eq!(merged["options"]["retentionEnabled"], true);
        let nulled = js("SELECT queen.configure('c', '{\"retryLimit\": null}')");
        assert_eq!(nulled["options"]["retryLimit"], 3);
        assert_eq!(nulled["options"]["leaseTime"], 30);
        let replaced = js("SELECT queen.configure('c', '{\"retryLimit\": 1}', 'replace')");
        assert_eq!(replaced["options"]["leaseTime"], 60);
        assert_eq!(replaced["options"]["retentionEnabled"], false);
        assert_eq!(replaced["options"]["retryLimit"], 1);
    }

    #[pg_test]
    fn queens_kept_options_are_stored_and_answered_back() {
        let created = js("SELECT queen.configure('kept', '{\"ttl\": 120}')");
        assert_eq!(created["options"]["ttl"], 120);
        assert_eq!(created["options"]["retentionSinkHold"], "");
        assert_eq!(created["options"]["retentionSinkHoldMaxSeconds"], 604_800);
        // A merge that names none keeps them; one that names one changes it.
        let merged = js("SELECT queen.configure('kept', '{\"leaseTime\": 30}')");
        assert_eq!(merged["options"]["ttl"], 120);
        let merged = js(
            "SELECT queen.configure('kept', '{\"retentionSinkHoldMaxSeconds\": 3600, \"retentionSinkHold\": \"\"}')",
        );
        assert_eq!(merged["options"]["ttl"], 120);
        assert_eq!(merged["options"]["retentionSinkHoldMaxSeconds"], 3600);
        assert_eq!(
            n("SELECT count(*) FROM queen.queue_kept_options k JOIN queen.queues q ON q.id = k.queue_id WHERE q.name = 'kept'"),
            1
        );
        // Queen's replace directive in the body resets every option.
        let replaced =
            js("SELECT queen.configure('kept', '{\"replace\": true, \"retryLimit\": 2}')");
        assert_eq!(replaced["options"]["ttl"], 3600);
        assert_eq!(replaced["options"]["leaseTime"], 60);
        assert_eq!(replaced["options"]["retryLimit"], 2);
        assert!(replaced["options"].get("replace").is_none());
        assert_eq!(
            n("SELECT count(*) FROM queen.queue_kept_options k JOIN queen.queues q ON q.id = k.queue_id WHERE q.name = 'kept'"),
            0
        );
    }

    #[pg_test(
        error = "options.retentionSinkHold: \"s3main\": queen has no retention sinks, so a hold on one would never be released; only \"\" (off) is taken"
    )]
    fn a_sink_hold_is_refused_rather_than_ignored() {
        js("SELECT queen.configure('hold', '{\"retentionSinkHold\": \"s3main\"}')");
    }

    #[pg_test(error = "options.retentionSinkHoldMaxSeconds: 59 is out of range (60 to 31536000)")]
    fn a_sink_hold_ceiling_below_a_minute_is_refused() {
        js("SELECT queen.configure('hold', '{\"retentionSinkHoldMaxSeconds\": 59}')");
    }

    #[pg_test(
        error = "options.retentionSinkHoldMaxSeconds: 31536001 is out of range (60 to 31536000)"
    )]
    fn a_sink_hold_ceiling_over_a_year_is_refused() {
        js("SELECT queen.configure('hold', '{\"retentionSinkHoldMaxSeconds\": 31536001}')");
    }

    #[pg_test(error = "options.ttl: must be an integer")]
    fn a_ttl_that_is_not_a_number_is_refused() {
        js("SELECT queen.configure('hold', '{\"ttl\": \"1h\"}')");
    }

    #[pg_test(error = "options.maxRetries: is not a queue option")]
    fn an_unknown_option_is_still_refused() {
        js("SELECT queen.configure('hold', '{\"maxRetries\": 3}')");
    }

    #[pg_test]
    fn failed_redelivers_then_dead_letters() {
        js("SELECT queen.configure('f', '{\"retryLimit\": 1, \"retryDelay\": 0}')");
        push(json!([{"queue": "f", "payload": "bad"}, {"queue": "f", "payload": "good"}]));
        let first = pop("f", None, 1, json!({}));
        assert_eq!(first["messages"][0]["deliveryAttempt"], 1);
        ack_all(&first, "failed", None);
        let second = pop("f", None, 1, json!({}));
        assert_eq!(datas(&second), vec![json!("bad")]);
        assert_eq!(second["messages"][0]["deliveryAttempt"], 2);
        let res = ack(
            json!([{"transactionId": second["messages"][0]["transactionId"],
        "partitionId": second["messages"][0]["partitionId"], "leaseId": second["leaseId"],
        "status": "failed", "error": "boom"}]),
        );
        assert_eq!(res[0]["dlq"], true, "{res}");
        assert_eq!(
            n("SELECT count(*) FROM queen.log_dlq WHERE error = 'boom' AND attempts = 2"),
            1
        );
        let third = pop("f", None, 1, json!({}));
        assert_eq!(datas(&third), vec![json!("good")]);
    }

    #[pg_test]
    fn dlq_status_dead_letters_at_once() {
        push(json!([{"queue": "x", "payload": 1}, {"queue": "x", "payload": 2}]));
        let p = pop("x", None, 2, json!({}));
        let m = &p["messages"][0];
        ack(
            json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": "dlq", "error": "poison"}),
        );
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq"), 1);
        assert_eq!(n("SELECT committed FROM queen.log_consumers"), 0);
    }

    #[pg_test]
    fn stale_lease_is_refused() {
        push(json!([{"queue": "l", "payload": 1}]));
        let p = pop("l", None, 1, json!({}));
        let m = &p["messages"][0];
        let res = ack(
            json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
        "leaseId": "00000000-0000-4000-8000-000000000000"}),
        );
        assert_eq!(res[0]["success"], false);
        assert!(
            res[0]["error"].as_str().unwrap().contains("is not held"),
            "{res}"
        );
        let unknown = ack(
            json!({"transactionId": "nope", "partitionId": m["partitionId"], "leaseId": m["leaseId"]}),
        );
        assert_eq!(unknown[0]["success"], false);
        assert!(unknown[0]["error"]
            .as_str()
            .unwrap()
            .contains("not acknowledged"));
        // Simulate the lease running out: the batch is handed out again.
        Spi::run(
            "UPDATE queen.log_cursor_states SET lease_expires_at = now() - interval '1 second'",
        )
        .unwrap();
        let again = pop("l", None, 1, json!({}));
        assert_eq!(datas(&again), vec![json!(1)]);
        assert_eq!(again["messages"][0]["deliveryAttempt"], 2);
        let late = ack(
            json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"]}),
        );
        assert_eq!(late[0]["success"], false);
    }

    #[pg_test]
    fn multi_partition_pop_shares_one_lease() {
        push(json!([
            {"queue": "m", "partition": "a", "payload": 1},
            {"queue": "m", "partition": "b", "payload": 2},
            {"queue": "m", "partition": "c", "payload": 3}
        ]));
        let p = pop("m", None, 10, json!({"partitions": 3}));
        assert_eq!(p["partitionsClaimed"], 3);
        let leases: std::collections::HashSet<String> = p["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["leaseId"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(leases.len(), 1);
        let renewed = Spi::get_one_with_args::<Json>(
            "SELECT queen.renew_lease($1, 120)",
            &[p["leaseId"].as_str().unwrap().into()],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(renewed["renewed"], 3);
        // batch is the global cap across partitions
        push(
            json!([{"queue": "m2", "partition": "a", "payload": 1}, {"queue": "m2", "partition": "a", "payload": 1},
                {"queue": "m2", "partition": "b", "payload": 2}, {"queue": "m2", "partition": "b", "payload": 2}]),
        );
        let capped = pop("m2", None, 3, json!({"partitions": 2}));
        assert_eq!(capped["messages"].as_array().unwrap().len(), 3);
    }

    #[pg_test]
    fn an_autopilot_pop_chooses_what_the_caller_left_unset() {
        let items: Vec<Value> = (0..30)
            .map(|i| json!({"queue": "ap", "partition": format!("p{}", i % 10), "payload": i}))
            .collect();
        push(Value::Array(items));
        let pop_null_batch = |options: Value| {
            Spi::get_one_with_args::<Json>(
                "SELECT queen.pop('ap', NULL, $1, NULL, $2)",
                &[Some("g").into(), JsonB(options).into()],
            )
            .unwrap()
            .unwrap()
            .0
        };
        // Unset batch and width: the settings' choices, echoed; it claims as
        // many partitions as hold messages, up to the width.
        let p = pop_null_batch(json!({"autopilot": true}));
        assert_eq!(p["autopilot"], json!({"partitions": 8, "batch": 100}));
        assert_eq!(p["partitionsClaimed"], 8);
        assert_eq!(p["messages"].as_array().unwrap().len(), 24);
        // What the caller sets is never overridden.
        let p = Spi::get_one_with_args::<Json>(
            "SELECT queen.pop('ap', NULL, 'h', 5, $1)",
            &[JsonB(json!({"autopilot": true, "partitions": 2})).into()],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(p["autopilot"], json!({"partitions": 2, "batch": 5}));
        assert_eq!(p["messages"].as_array().unwrap().len(), 5);
        // One named partition is one partition wide.
        let p = Spi::get_one::<Json>(
            "SELECT queen.pop('ap', 'p3', 'k', NULL, '{\"autopilot\": true}')",
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(p["autopilot"], json!({"partitions": 1, "batch": 100}));
        assert_eq!(p["messages"].as_array().unwrap().len(), 3);
        // The framed answer carries the same echo in its own keys.
        let framed = Spi::get_one::<Vec<u8>>(
            "SELECT queen.pop_frames('ap', NULL, 'f', NULL, '{\"autopilot\": true}')",
        )
        .unwrap()
        .unwrap();
        let answer = queen_frames::pop_body::decode_pop_answer(&framed).unwrap();
        let own: Value = serde_json::from_slice(&answer.own_json).unwrap();
        assert_eq!(own["autopilot"], json!({"partitions": 8, "batch": 100}));
        // Without autopilot: a NULL batch is 1, one partition, no echo.
        let p = pop_null_batch(json!({}));
        assert!(p.get("autopilot").is_none());
        assert_eq!(p["messages"].as_array().unwrap().len(), 1);
        // A setting that says otherwise is what it chooses.
        Spi::run("SET queen.pop_autopilot_batch = 4").unwrap();
        let p = Spi::get_one::<Json>(
            "SELECT queen.pop('ap', NULL, 'm', NULL, '{\"autopilot\": true}')",
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(p["autopilot"]["batch"], 4);
        assert_eq!(p["messages"].as_array().unwrap().len(), 4);
    }

    #[pg_test]
    fn an_ack_answer_says_when_it_ended_the_lease() {
        let bodies = |popped: &Value| -> Vec<Value> {
            popped["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                       "leaseId": m["leaseId"], "status": "completed"})
                })
                .collect()
        };
        push(json!([{"queue": "lr", "payload": 1}, {"queue": "lr", "payload": 2}]));
        let acks = bodies(&pop("lr", None, 2, json!({})));
        let first = ack(json!([acks[0]]));
        assert_eq!(first[0]["leaseReleased"], false, "{first}");
        assert_eq!(first[0]["error"], Value::Null, "{first}");
        assert_eq!(first[0]["dlq"], false, "{first}");
        let second = ack(json!([acks[1]]));
        assert_eq!(second[0]["leaseReleased"], true, "{second}");
        assert_eq!(second[0]["success"], true, "{second}");
        // Acking again changes nothing and releases nothing.
        let again = ack(json!([acks[1]]));
        assert_eq!(again[0]["leaseReleased"], false, "{again}");
        // The text path answers alike.
        push(json!([{"queue": "lr2", "payload": 1}]));
        let acks = Value::Array(bodies(&pop("lr2", None, 1, json!({}))));
        let text =
            Spi::get_one_with_args::<Json>("SELECT queen.ack_text($1)", &[acks.to_string().into()])
                .unwrap()
                .unwrap()
                .0;
        assert_eq!(text[0]["leaseReleased"], true, "{text}");
        assert_eq!(text[0]["dlq"], false, "{text}");
        assert!(text[0].as_object().unwrap().contains_key("error"), "{text}");
    }

    #[pg_test]
    fn auto_ack_commits_at_delivery() {
        push(json!([{"queue": "aa", "payload": 1}, {"queue": "aa", "payload": 2}]));
        let p = pop("aa", None, 1, json!({"autoAck": true}));
        assert!(p["leaseId"].is_null());
        let next = pop("aa", None, 1, json!({"autoAck": true}));
        assert_eq!(datas(&next), vec![json!(2)]);
    }

    #[pg_test]
    fn delayed_processing_hides_young_messages() {
        js("SELECT queen.configure('dp', '{\"delayedProcessing\": 60}')");
        push(json!([{"queue": "dp", "payload": 1}]));
        assert_eq!(
            pop("dp", None, 1, json!({}))["messages"]
                .as_array()
                .unwrap()
                .len(),
            0
        );
        Spi::run("UPDATE queen.log_segments SET created_at = now() - interval '2 minutes'")
            .unwrap();
        assert_eq!(
            pop("dp", None, 1, json!({}))["messages"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }

    #[pg_test]
    fn namespace_pop_spans_queues() {
        js("SELECT queen.configure('n1', '{\"namespace\": \"billing\"}')");
        js("SELECT queen.configure('n2', '{\"namespace\": \"billing\"}')");
        push(json!([{"queue": "n1", "payload": 1}, {"queue": "n2", "payload": 2}]));
        let p = Spi::get_one::<Json>("SELECT queen.pop(NULL, NULL, 'g', 10, '{\"namespace\": \"billing\", \"partitions\": 2}')")
        .unwrap()
        .unwrap()
        .0;
        let mut got = datas(&p);
        got.sort_by_key(|v| v.as_i64());
        assert_eq!(got, vec![json!(1), json!(2)]);
    }

    #[pg_test]
    fn delete_queue_removes_everything() {
        push(json!([{"queue": "del", "payload": 1}, {"queue": "keep", "payload": 1}]));
        let p = pop("del", None, 1, json!({}));
        ack_all(&p, "dlq", None);
        js("SELECT queen.delete_queue('del')");
        assert_eq!(n("SELECT count(*) FROM queen.queues WHERE name = 'del'"), 0);
        assert_eq!(n("SELECT count(*) FROM queen.log_partitions"), 1);
        assert_eq!(n("SELECT count(*) FROM queen.log_txns"), 1);
        assert_eq!(n("SELECT count(*) FROM queen.log_dlq"), 0);
        assert_eq!(n("SELECT count(*) FROM queen.log_segments"), 1);
    }

    #[pg_test]
    fn partition_state_is_seeded_by_first_push() {
        push(json!([{"queue": "w", "payload": 1}]));
        assert_eq!(n("SELECT count(*) FROM queen.log_partitions p \
                      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s \
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true \
                      WHERE p.oldest_live_at IS NOT NULL AND p.oldest_txn_at IS NOT NULL \
                      AND COALESCE(t.end_offset, p.log_start - 1) = 0"), 1);
        let last_write_us = "SELECT (extract(epoch FROM GREATEST(p.last_write_at, t.created_at)) * 1e6)::int8 \
                             FROM queen.log_partitions p \
                             LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s \
                             WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true";
        let before = n(last_write_us);
        push(json!([{"queue": "w", "payload": 2}]));
        let after = n(last_write_us);
        assert!(after >= before);
        // created_at never decreases with the offset.
        assert_eq!(n("SELECT count(*) FROM (SELECT created_at < lag(created_at) OVER (ORDER BY base_offset) AS back FROM queen.log_segments) s WHERE back"), 0);
    }

    #[pg_test]
    fn binary_push_plain_and_packed_and_framed_pop() {
        use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup, PushItem};
        let plain = encode_push_body(
            &[PushGroup {
                queue: "bin".into(),
                partition: "p".into(),
                messages: GroupMessages::Items(vec![PushItem {
                    transaction_id: Some("b-1".into()),
                    payload: b"{\"k\":1}".to_vec(),
                }]),
            }],
            false,
        )
        .unwrap();
        let r = Spi::get_one_with_args::<Json>("SELECT queen.push_binary($1)", &[plain.into()])
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(r[0]["status"], "queued");
        // Pre-packed frames are kept byte for byte.
        let id = queen_frames::new_message_id();
        let frame = queen_frames::FrameRef {
            flags: 0,
            message_id: id,
            trace_id: None,
            transaction_id: "b-2",
            producer: None,
            payload: b"[1,2]",
        };
        let z = queen_frames::segment::encode_segment([frame].iter()).unwrap();
        let packed = encode_push_body(
            &[PushGroup {
                queue: "bin".into(),
                partition: "p".into(),
                messages: GroupMessages::Packed {
                    count: 1,
                    zstd: z.clone(),
                },
            }],
            true,
        )
        .unwrap();
        let counts =
            Spi::get_one_with_args::<Json>("SELECT queen.push_binary($1)", &[packed.into()])
                .unwrap()
                .unwrap()
                .0;
        assert_eq!(
            counts,
            json!({"count": 1, "queued": 1, "duplicate": 0, "error": 0})
        );
        let stored =
            Spi::get_one::<Vec<u8>>("SELECT blob FROM queen.log_segments WHERE base_offset = 1")
                .unwrap()
                .unwrap();
        assert_eq!(stored, z);
        let framed = Spi::get_one::<Vec<u8>>("SELECT queen.pop_frames('bin', 'p', NULL, 10)")
            .unwrap()
            .unwrap();
        let answer = queen_frames::pop_body::decode_pop_answer(&framed).unwrap();
        assert_eq!(answer.claims.len(), 1);
        assert_eq!((answer.claims[0].start, answer.claims[0].end), (0, 1));
        assert_eq!(answer.claims[0].records.len(), 2);
        let raw =
            queen_frames::decompress_segment(&answer.claims[0].records[1].bytes, 1 << 20).unwrap();
        let frames = queen_frames::parse_frames(&raw, 1).unwrap();
        assert_eq!(frames[0].message_id, id);
        assert_eq!(frames[0].payload, b"[1,2]");
    }

    /// A packed frame whose transaction id is its message id's text was given no
    /// id of the caller's own: it is not checked for duplicates, as a JSON push
    /// without one is not, and still acks by that id. A frame with an id of its
    /// own is deduplicated.
    #[pg_test]
    fn packed_frames_without_an_own_id_are_not_deduplicated() {
        use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup};
        let body = |frames: &[(&[u8; 16], &str)]| {
            let refs: Vec<queen_frames::FrameRef> = frames
                .iter()
                .map(|(id, txn)| queen_frames::FrameRef {
                    flags: 0,
                    message_id: **id,
                    trace_id: None,
                    transaction_id: txn,
                    producer: None,
                    payload: b"{\"n\":1}",
                })
                .collect();
            let zstd = queen_frames::segment::encode_segment(refs.iter()).unwrap();
            let messages = GroupMessages::Packed {
                count: frames.len() as u32,
                zstd,
            };
            encode_push_body(
                &[PushGroup {
                    queue: "pk".into(),
                    partition: "p".into(),
                    messages,
                }],
                true,
            )
            .unwrap()
        };
        let push = |b: Vec<u8>| {
            Spi::get_one_with_args::<Json>("SELECT queen.push_binary($1)", &[b.into()])
                .unwrap()
                .unwrap()
                .0
        };
        let (a, b) = (
            queen_frames::new_message_id(),
            queen_frames::new_message_id(),
        );
        let (a_text, b_text) = (queen_frames::id_text(&a), queen_frames::id_text(&b));
        // The same body twice (a client resending it): both land, and the
        // sidecar keeps no dedup hashes for them.
        let minted = body(&[(&a, &a_text), (&b, &b_text)]);
        assert_eq!(
            push(minted.clone()),
            json!({"count": 2, "queued": 2, "duplicate": 0, "error": 0})
        );
        assert_eq!(
            push(minted),
            json!({"count": 2, "queued": 2, "duplicate": 0, "error": 0})
        );
        assert_eq!(
            n("SELECT count(*) FROM queen.log_txns WHERE dedup_hashes IS NOT NULL"),
            0
        );
        // An id of the caller's own (or another message's id text) is checked.
        let own = body(&[
            (&queen_frames::new_message_id(), "order-7"),
            (&queen_frames::new_message_id(), &a_text),
        ]);
        assert_eq!(
            push(own.clone()),
            json!({"count": 2, "queued": 2, "duplicate": 0, "error": 0})
        );
        assert_eq!(
            push(own),
            json!({"count": 2, "queued": 0, "duplicate": 2, "error": 0})
        );
        // A minted id acks through the sidecar like any other.
        let p = pop("pk", None, 1, json!({}));
        assert_eq!(p["messages"][0]["transactionId"], json!(a_text));
        let acked = ack_all(&p, "completed", None);
        assert_eq!(acked[0]["success"], true, "{acked}");
        assert_eq!(n("SELECT committed FROM queen.log_consumers"), 0);
    }

    #[pg_test]
    fn producer_identity_is_stamped_into_frames() {
        Spi::run("SELECT queen.push('[{\"queue\": \"prod\", \"payload\": 1}]', 'svc-a')").unwrap();
        let p = pop("prod", None, 1, json!({}));
        assert_eq!(p["messages"][0]["producerSub"], "svc-a");
    }

    #[pg_test]
    fn transaction_pushes_and_acks_together() {
        push(json!([{"queue": "t", "payload": 1}]));
        let p = pop("t", None, 1, json!({}));
        let m = &p["messages"][0];
        let res = Spi::get_one_with_args::<Json>(
        "SELECT queen.transaction($1)",
        &[JsonB(json!({
            "operations": [
                {"type": "ack", "transactionId": m["transactionId"], "partitionId": m["partitionId"], "status": "completed"},
                {"type": "push", "items": [{"queue": "t2", "payload": "next"}]}
            ],
            "requiredLeases": [p["leaseId"]]
        }))
        .into()],
    )
    .unwrap()
    .unwrap()
    .0;
        assert_eq!(res["success"], true);
        assert_eq!(res["results"][0]["type"], "ack");
        assert_eq!(res["results"][1]["type"], "push");
        assert_eq!(n("SELECT committed FROM queen.log_consumers"), 0);
        assert_eq!(datas(&pop("t2", None, 1, json!({}))), vec![json!("next")]);
    }

    #[pg_test]
    fn consumer_groups_can_be_listed_sought_and_deleted() {
        push(
            json!([{"queue": "cg", "payload": 0}, {"queue": "cg", "payload": 1}, {"queue": "cg", "payload": 2}]),
        );
        let p = pop("cg", Some("g"), 2, json!({}));
        ack_all(&p, "completed", Some("g"));
        let list = js("SELECT queen.consumer_groups_list()");
        assert_eq!(list["consumerGroups"][0]["consumerGroup"], "g");
        assert_eq!(list["consumerGroups"][0]["queues"][0]["lag"], 1);
        // Back to the beginning: everything is delivered again.
        js("SELECT queen.consumer_group_seek('g', 'cg', '{\"position\": \"beginning\"}')");
        assert_eq!(
            datas(&pop("cg", Some("g"), 10, json!({}))),
            vec![json!(0), json!(1), json!(2)]
        );
        // To the end: nothing is left.
        js("SELECT queen.consumer_group_seek('g', 'cg', '{\"position\": \"end\"}')");
        assert_eq!(
            pop("cg", Some("g"), 10, json!({}))["messages"]
                .as_array()
                .unwrap()
                .len(),
            0
        );
        let detail = js("SELECT queen.consumer_group_get('g')");
        assert_eq!(detail["partitions"][0]["committedOffset"], 2);
        let deleted = js("SELECT queen.consumer_group_delete('g')");
        assert_eq!(deleted["partitionsDeleted"], 1);
        assert_eq!(deleted["subscriptionsDeleted"], 1);
        // A deleted group starts over.
        assert_eq!(
            pop("cg", Some("g"), 10, json!({}))["messages"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }

    #[pg_test(error = "options: Must specify toEnd=true or a timestamp")]
    fn a_seek_needs_a_target() {
        push(json!([{"queue": "cg2", "payload": 0}]));
        js("SELECT queen.consumer_group_seek('g', 'cg2', '{}')");
    }

    #[pg_test(error = "items[0].queue: is required")]
    fn push_without_queue_is_refused() {
        push(json!([{"payload": 1}]));
    }

    #[pg_test(error = "batch: 0 must be at least 1")]
    fn pop_batch_zero_is_refused() {
        pop("q", None, 0, json!({}));
    }

    #[pg_test(
        error = "acknowledgments[0].status: \"maybe\" is not one of completed, failed, retry, dlq"
    )]
    fn unknown_ack_status_is_refused() {
        ack(json!({"transactionId": "t", "partitionId": 1, "status": "maybe"}));
    }

    #[pg_test(error = "queue \"ghost\" does not exist")]
    fn deleting_unknown_queue_is_refused() {
        js("SELECT queen.delete_queue('ghost')");
    }

    #[pg_test(error = "options.leaseTime: must be an integer")]
    fn configure_wrong_type_is_refused() {
        js("SELECT queen.configure('c', '{\"leaseTime\": \"long\"}')");
    }

    /// A transaction reads its push items as a push reads them: an item
    /// that is not an object is refused (or read) the same way.
    #[pg_test]
    fn a_transaction_reads_push_items_as_a_push_does() {
        let txn = |items: Value| {
            js(&format!(
                "SELECT queen.transaction('{}')",
                json!({"operations": [{"type": "push", "items": items}]})
            ))
        };
        let res = txn(json!([["tq", "tp", {"a": 1}]]));
        assert_eq!(res["success"], true, "{res}");
        let pushed = push(json!([["tq", "tp", {"a": 2}]]));
        assert_eq!(pushed[0]["status"], "queued", "{pushed}");
        let p = pop("tq", None, 10, json!({}));
        let datas: Vec<&Value> = p["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["data"])
            .collect();
        assert_eq!(datas, [&json!({"a": 1}), &json!({"a": 2})]);
        let refused = |sql: String| {
            crate::maintenance::unit::in_subtransaction(|| Spi::run(&sql).unwrap())
                .expect_err("refused")
        };
        let one = refused(format!(
            "SELECT queen.transaction('{}')",
            json!({"operations": [{"type": "push", "items": [[]]}]})
        ));
        let other = refused(format!("SELECT queen.push_text('{}')", json!([[]])));
        assert_eq!(one, other);
        assert_eq!(one.0, "22023", "{one:?}");
        assert!(one.1.contains("items[0].queue"), "{one:?}");
    }
}
