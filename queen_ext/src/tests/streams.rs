//! Streaming queries inside PostgreSQL: registration by name and hash, a
//! cycle's state writes, pushes and ack applied together or not at all,
//! the state reads' filters and bound, and the state's life with its queue.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::tests::support::{datas, js, n, push};

    fn call(function: &str, body: Value) -> Value {
        Spi::get_one_with_args::<Json>(
            &format!("SELECT queen.{function}($1)"),
            &[JsonB(body).into()],
        )
        .unwrap()
        .unwrap()
        .0
    }

    /// The SQLSTATE and message of the ERROR `function` raises for `body`,
    /// in a subtransaction, so that the test's transaction goes on.
    fn refused(function: &str, body: Value) -> (String, String) {
        match queen_datum::errors::in_subtransaction(|| call(function, body)) {
            Ok(v) => panic!("{function} answered {v}"),
            Err(e) => (e.sqlstate, e.message),
        }
    }

    fn register(name: &str, hash: &str, reset: bool) -> Value {
        call(
            "stream_register",
            json!({"name": name, "source_queue": "src", "config_hash": hash,
                   "sink_queue": "sink", "reset": reset}),
        )
    }

    fn pop(queue: &str, group: &str) -> Value {
        js(&format!(
            "SELECT queen.pop('{queue}', NULL, '{group}', 100, '{{}}')"
        ))
    }

    fn state(query: &Value, pid: &Value, filter: Value) -> Vec<(String, Value)> {
        let mut body = json!({"query_id": query["query_id"], "partition_id": pid});
        body.as_object_mut()
            .unwrap()
            .extend(filter.as_object().unwrap().clone());
        call("stream_state_get", body)["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["key"].as_str().unwrap().to_owned(), r["value"].clone()))
            .collect()
    }

    /// A cycle of `query` over what `popped` delivered of one partition.
    fn cycle_body(query: &Value, popped: &Value, ops: Value, pushes: Value) -> Value {
        let last = popped["messages"].as_array().unwrap().last().unwrap();
        json!({
            "query_id": query["query_id"], "partition_id": last["partitionId"],
            "consumer_group": "streams", "state_ops": ops, "push_items": pushes,
            "ack": {"transactionId": last["transactionId"], "leaseId": popped["leaseId"],
                    "status": "completed", "count": popped["messages"].as_array().unwrap().len()},
            "release_lease": true,
        })
    }

    #[pg_test]
    fn a_query_is_registered_once_by_name_and_its_hash_guards_its_state() {
        let first = register("q1", "h1", false);
        assert_eq!(first["success"], json!(true));
        assert_eq!(first["fresh"], json!(true));
        let again = register("q1", "h1", true);
        assert_eq!(
            (
                again["query_id"].clone(),
                again["fresh"].clone(),
                again["reset"].clone()
            ),
            (first["query_id"].clone(), json!(false), json!(false)),
            "the same chain: the same id, and reset changes nothing"
        );
        push(json!([{"queue": "src", "partition": "p", "payload": {"v": 1}}]));
        let popped = pop("src", "streams");
        let pid = popped["messages"][0]["partitionId"].clone();
        let ops = json!([{"type": "upsert", "key": "w", "value": {"acc": 1}}]);
        call("stream_cycle", cycle_body(&first, &popped, ops, json!([])));

        let changed = register("q1", "h2", false);
        assert_eq!(changed["success"], json!(false));
        assert_eq!(changed["conflict"], json!(true));
        assert_eq!(changed["query_id"], first["query_id"]);
        assert!(changed["error"]
            .as_str()
            .unwrap()
            .contains("config_hash mismatch"));
        assert_eq!(
            state(&first, &pid, json!({})).len(),
            1,
            "a refusal keeps the state"
        );
        assert_eq!(
            n("SELECT count(*) FROM queen.stream_queries WHERE config_hash = 'h1'"),
            1
        );

        let reset = register("q1", "h2", true);
        assert_eq!(
            (
                reset["query_id"].clone(),
                reset["reset"].clone(),
                reset["fresh"].clone()
            ),
            (first["query_id"].clone(), json!(true), json!(false))
        );
        assert!(
            state(&first, &pid, json!({})).is_empty(),
            "a reset wipes the state"
        );

        let (code, message) = refused(
            "stream_register",
            json!({"source_queue": "s", "config_hash": "h"}),
        );
        assert_eq!(
            (code.as_str(), message.as_str()),
            ("22023", "name: is required")
        );
    }

    #[pg_test]
    fn a_cycle_writes_state_pushes_and_acks_together() {
        let query = register("q2", "h", false);
        push(json!([
            {"queue": "src", "partition": "p", "payload": {"v": 1}},
            {"queue": "src", "partition": "p", "payload": {"v": 2}},
            {"queue": "src", "partition": "p", "payload": {"v": 3}},
        ]));
        let popped = pop("src", "streams");
        let pid = popped["messages"][0]["partitionId"].clone();
        let ops = json!([
            {"type": "upsert", "key": "a", "value": {"acc": 6, "windowEnd": 10}},
            {"type": "upsert", "key": "b", "value": {"acc": 1}},
            {"type": "delete", "key": "b"},
            {"type": "upsert", "key": "c"},
        ]);
        let pushes = json!([
            {"queue": "sink", "partition": "p", "payload": {"sum": 6}},
            {"queue": "sink", "partition": "p", "payload": {"sum": 7}},
        ]);
        let out = call("stream_cycle", cycle_body(&query, &popped, ops, pushes));
        assert_eq!(out["success"], json!(true), "{out}");
        assert_eq!(out["queueName"], json!("src"));
        assert_eq!(out["state_ops_applied"], json!(4));
        assert_eq!(out["push_results"].as_array().unwrap().len(), 2);
        assert_eq!(
            out["ack_result"],
            json!({"success": true, "count": 3, "lease_released": true, "dlq": false})
        );
        assert_eq!(
            state(&query, &pid, json!({})),
            vec![("a".into(), json!({"acc": 6, "windowEnd": 10})), ("c".into(), json!({}))],
            "ops apply in order: b was written, then deleted; an upsert without a value stores {{}}"
        );
        assert_eq!(
            datas(&pop("sink", "reader")),
            vec![json!({"sum": 6}), json!({"sum": 7})]
        );
        assert!(pop("src", "streams")["messages"]
            .as_array()
            .unwrap()
            .is_empty());

        // The same cycle again (a retry after its commit): the lease is gone,
        // so nothing of it is written a second time.
        let (code, message) = refused(
            "stream_cycle",
            cycle_body(
                &query,
                &popped,
                json!([{"type": "upsert", "key": "z", "value": 1}]),
                json!([{"queue": "sink", "partition": "p", "payload": {"sum": 6}}]),
            ),
        );
        assert_eq!(code, "55000", "{message}");
        assert!(message.contains("nothing was applied"), "{message}");
        assert_eq!(state(&query, &pid, json!({})).len(), 2);
        assert!(pop("sink", "reader")["messages"]
            .as_array()
            .unwrap()
            .is_empty());
    }

    #[pg_test]
    fn a_refused_cycle_leaves_state_sink_and_source_as_they_were() {
        let query = register("q3", "h", false);
        push(json!([{"queue": "src", "partition": "p", "payload": {"v": 1}}]));
        let popped = pop("src", "streams");
        let pid = popped["messages"][0]["partitionId"].clone();
        let mut body = cycle_body(
            &query,
            &popped,
            json!([{"type": "upsert", "key": "k", "value": 1}]),
            json!([{"queue": "sink", "payload": {"out": 1}}]),
        );
        // Another consumer's lease: the cycle is fenced off.
        body["ack"]["leaseId"] = json!("00000000-0000-4000-8000-000000000001");
        let (code, message) = refused("stream_cycle", body.clone());
        assert_eq!(code, "55000");
        assert!(message.contains("is not held"), "{message}");
        // A state op of an unknown type: refused before anything is touched.
        body["ack"]["leaseId"] = popped["leaseId"].clone();
        body["state_ops"] = json!([{"type": "merge", "key": "k"}]);
        let (code, message) = refused("stream_cycle", body.clone());
        assert_eq!(
            (code.as_str(), message.as_str()),
            (
                "22023",
                "state_ops[0].type: \"merge\" is not one of upsert, delete"
            )
        );
        // An unknown query.
        body["state_ops"] = json!([]);
        body["query_id"] = json!("00000000-0000-4000-8000-000000000002");
        assert_eq!(refused("stream_cycle", body.clone()).0, "42704");

        assert!(state(&query, &pid, json!({})).is_empty());
        assert_eq!(
            n("SELECT count(*) FROM queen.queues WHERE name = 'sink'"),
            0
        );
        // The lease is still held: the batch acks with a good cycle.
        body["query_id"] = query["query_id"].clone();
        let out = call("stream_cycle", body);
        assert_eq!(out["ack_result"]["count"], json!(1), "{out}");
    }

    #[pg_test]
    fn a_cycle_that_keeps_its_lease_acks_the_count_it_names() {
        let query = register("q4", "h", false);
        let items: Vec<Value> = (0..5)
            .map(|i| json!({"queue": "src", "partition": "p", "payload": {"v": i}}))
            .collect();
        push(Value::Array(items));
        let popped = pop("src", "streams");
        let mut body = cycle_body(&query, &popped, json!([]), json!([]));
        body["release_lease"] = json!(false);
        body["ack"]["count"] = json!(2);
        body["ack"]["transactionId"] = popped["messages"][1]["transactionId"].clone();
        let out = call("stream_cycle", body.clone());
        assert_eq!(out["ack_result"]["count"], json!(2), "{out}");
        assert_eq!(out["ack_result"]["lease_released"], json!(false));
        // Made again (its answer lost): the lease is still held, but the
        // message it names is done, so nothing is applied twice.
        let (code, message) = refused("stream_cycle", body.clone());
        assert_eq!(code, "55000", "{message}");
        assert!(message.contains("acknowledged already"), "{message}");
        // An ack must name its lease, and a count is at least 1.
        let mut bad = body.clone();
        bad["ack"].as_object_mut().unwrap().remove("leaseId");
        assert_eq!(refused("stream_cycle", bad).1, "ack.leaseId: is required");
        let mut bad = body;
        bad["ack"]["count"] = json!(0);
        assert_eq!(
            refused("stream_cycle", bad).1,
            "ack.count: must be at least 1"
        );
        let pid = popped["messages"][0]["partitionId"].as_str().unwrap();
        assert_eq!(
            n(&format!(
                "SELECT committed FROM queen.log_consumers WHERE partition_id = {pid} AND consumer_group = 'streams'"
            )),
            1,
            "the cursor passed the first two messages"
        );
    }

    #[pg_test]
    fn a_cycle_that_dead_letters_its_batch_writes_each_message_under_its_own_id() {
        let query = register("q8", "h", false);
        push(json!([
            {"queue": "src", "partition": "p", "payload": {"v": 1}, "transactionId": "t-a"},
            {"queue": "src", "partition": "p", "payload": {"v": 2}, "transactionId": "t-b"},
        ]));
        let popped = pop("src", "streams");
        let mut body = cycle_body(&query, &popped, json!([]), json!([]));
        body["ack"]["status"] = json!("dlq");
        body["ack"]["error"] = json!("window overflow");
        let out = call("stream_cycle", body);
        assert_eq!(out["ack_result"]["dlq"], json!(true), "{out}");
        let dead = js("SELECT queen.dlq_messages('{\"queue\": \"src\"}')");
        let mut txns: Vec<String> = dead["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["transactionId"].as_str().unwrap().to_owned())
            .collect();
        txns.sort();
        assert_eq!(txns, vec!["t-a", "t-b"]);
        assert!(pop("src", "streams")["messages"]
            .as_array()
            .unwrap()
            .is_empty());
    }

    #[pg_test]
    fn a_flush_that_could_count_twice_or_lose_a_batch_is_put_off() {
        let query = register("q9", "h", false);
        push(json!([{"queue": "src", "partition": "p", "payload": {"v": 1}}]));
        let popped = pop("src", "streams");
        let pid = popped["messages"][0]["partitionId"].clone();
        let flush = |ops: Value| {
            json!({"query_id": query["query_id"], "partition_id": pid, "consumer_group": "streams",
                   "state_ops": ops, "push_items": [{"queue": "sink", "payload": {"closed": 1}}],
                   "ack": null})
        };
        let deferred = |out: &Value| out["deferred"].as_str().unwrap_or("").to_owned();
        // A batch is in flight: its cycle will see the state.
        let out = call(
            "stream_cycle",
            flush(json!([{"type": "upsert", "key": "w", "value": 1}])),
        );
        assert!(deferred(&out).contains("holds a lease"), "{out}");
        let ops = json!([{"type": "upsert", "key": "w", "value": {"acc": 1}}]);
        call("stream_cycle", cycle_body(&query, &popped, ops, json!([])));
        // The window was just written (by another worker's batch, for all a
        // flush knows): closing it now could lose that batch.
        let close = json!([{"type": "delete", "key": "w"}]);
        let out = call("stream_cycle", flush(close.clone()));
        assert!(deferred(&out).contains("written"), "{out}");
        // Closed by another flush already: closing it again would count it
        // twice.
        let out = call(
            "stream_cycle",
            flush(json!([{"type": "delete", "key": "gone"}])),
        );
        assert!(deferred(&out).contains("closed by another cycle"), "{out}");
        assert_eq!(state(&query, &pid, json!({})).len(), 1);
        assert_eq!(
            n("SELECT count(*) FROM queen.queues WHERE name = 'sink'"),
            0
        );
        // Once it has been quiet long enough, the flush closes it.
        Spi::run("SET LOCAL queen.stream_flush_quiet_ms = 0").unwrap();
        let out = call("stream_cycle", flush(close));
        assert!(out.get("deferred").is_none(), "{out}");
        assert_eq!(out["state_ops_applied"], json!(1));
        assert!(state(&query, &pid, json!({})).is_empty());
        assert_eq!(datas(&pop("sink", "reader")), vec![json!({"closed": 1})]);
    }

    #[pg_test]
    fn state_reads_filter_by_keys_prefix_and_ripeness_within_their_bound() {
        let query = register("q5", "h", false);
        push(json!([{"queue": "src", "partition": "p", "payload": {}}]));
        let popped = pop("src", "streams");
        let pid = popped["messages"][0]["partitionId"].clone();
        let ops = json!([
            {"type": "upsert", "key": "tumb\u{1f}1", "value": {"windowEnd": 1000}},
            {"type": "upsert", "key": "tumb\u{1f}2", "value": {"windowEnd": 2000}},
            {"type": "upsert", "key": "tumb\u{1f}3", "value": {"windowEnd": "soon"}},
            {"type": "upsert", "key": "__wm__", "value": {"eventTimeMs": 5}},
            {"type": "upsert", "key": "tumb\u{20}past", "value": {"windowEnd": 1}},
        ]);
        call("stream_cycle", cycle_body(&query, &popped, ops, json!([])));
        let keys = |f: Value| -> Vec<String> {
            state(&query, &pid, f).into_iter().map(|(k, _)| k).collect()
        };
        assert_eq!(keys(json!({"keys": []})).len(), 5, "no keys: every row");
        assert_eq!(keys(json!({"keys": ["__wm__", "nope"]})), vec!["__wm__"]);
        assert_eq!(
            keys(json!({"key_prefix": "tumb\u{1f}"})),
            vec!["tumb\u{1f}1", "tumb\u{1f}2", "tumb\u{1f}3"]
        );
        assert_eq!(
            keys(json!({"key_prefix": "tumb\u{1f}", "ripe_at_or_before": 1500})),
            vec!["tumb\u{1f}1"],
            "only numeric window ends at or before the instant"
        );
        // Another partition's state is not this one's.
        assert!(state(&query, &json!("999999"), json!({})).is_empty());

        Spi::run("SET LOCAL queen.stream_max_rows = 4").unwrap();
        let (code, _) = refused(
            "stream_state_get",
            json!({"query_id": query["query_id"], "partition_id": pid}),
        );
        assert_eq!(
            code, "54000",
            "a read past the bound is refused, not cut short"
        );
    }

    #[pg_test]
    fn state_lives_as_long_as_its_queue_and_keeps_its_partition() {
        let query = register("q6", "h", false);
        push(json!([{"queue": "src", "partition": "p", "payload": {}}]));
        let popped = pop("src", "streams");
        let pid = popped["messages"][0]["partitionId"]
            .as_str()
            .unwrap()
            .to_owned();
        let ops = json!([{"type": "upsert", "key": "__wm__", "value": {"eventTimeMs": 5}}]);
        call("stream_cycle", cycle_body(&query, &popped, ops, json!([])));
        // Every message gone: the partition is kept while state names it.
        Spi::run(&format!(
            "DELETE FROM queen.log_segments WHERE partition_id = {pid}"
        ))
        .unwrap();
        let dead = |pid: &str| {
            Spi::get_one::<bool>(&format!(
                "SELECT queen_internal.log_partition_dead_v1({pid}, now() + interval '1 day')"
            ))
            .unwrap()
            .unwrap()
        };
        assert!(
            !dead(&pid),
            "a partition with stream state is not reclaimed"
        );

        let listed = js("SELECT queen.stream_queries()");
        let q6 = listed["queries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["name"] == json!("q6"))
            .unwrap()
            .clone();
        assert_eq!(
            (q6["state_rows"].clone(), q6["state_partitions"].clone()),
            (json!(1), json!(1))
        );

        let gone = js("SELECT queen.stream_delete('q6')");
        assert_eq!(
            (gone["deleted"].clone(), gone["state_rows"].clone()),
            (json!(true), json!(1))
        );
        assert!(dead(&pid), "without the state the partition is reclaimable");

        // Another query's state on the queue goes with the queue.
        let other = register("q7", "h", false);
        push(json!([{"queue": "src", "partition": "p2", "payload": {}}]));
        let popped = pop("src", "streams");
        let ops = json!([{"type": "upsert", "key": "k", "value": 1}]);
        call("stream_cycle", cycle_body(&other, &popped, ops, json!([])));
        assert_eq!(n("SELECT count(*) FROM queen.stream_state"), 1);
        js("SELECT queen.delete_queue('src')");
        assert_eq!(
            n("SELECT count(*) FROM queen.stream_state"),
            0,
            "deleting the queue deletes its partitions' state"
        );
        assert_eq!(
            js("SELECT queen.stream_delete('q6')")["deleted"],
            json!(false)
        );
    }
}
