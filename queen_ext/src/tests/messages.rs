//! Message and trace tests inside PostgreSQL: deleted messages (tombstones)
//! skipped by every group's pop and dropped by retention with their
//! segment, the message readers, and the traces with their purge.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::tests::support::{ack_all, js, n};

    /// Pushes `txns` to queue/partition `p` in one push (one segment).
    fn push(queue: &str, txns: &[&str]) -> i64 {
        let items: Vec<Value> = txns
            .iter()
            .map(|t| {
                json!({"queue": queue, "partition": "p", "transactionId": t,
                       "payload": {"t": t}})
            })
            .collect();
        Spi::get_one_with_args::<Json>(
            "SELECT queen.push($1)",
            &[JsonB(Value::Array(items)).into()],
        )
        .unwrap();
        pid(queue)
    }

    fn pid(queue: &str) -> i64 {
        Spi::get_one_with_args::<i64>(
            "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id \
              WHERE q.name = $1",
            &[queue.into()],
        )
        .unwrap()
        .unwrap()
    }

    fn pop(queue: &str, group: &str, batch: i32) -> Value {
        Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, NULL, $2, $3, '{}')",
            &[queue.into(), group.into(), batch.into()],
        )
        .unwrap()
        .unwrap()
        .0
    }

    fn txns(popped: &Value) -> Vec<String> {
        popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["transactionId"].as_str().unwrap().to_owned())
            .collect()
    }

    fn delete(pid: i64, txn: &str) -> Value {
        js(&format!("SELECT queen.message_delete({pid}, '{txn}')"))
    }

    fn committed(pid: i64, group: &str) -> i64 {
        n(&format!(
            "SELECT committed FROM queen.log_consumers \
              WHERE partition_id = {pid} AND consumer_group = '{group}'"
        ))
    }

    #[pg_test]
    fn a_deleted_message_is_not_delivered_to_a_second_group() {
        let pid = push("del1", &["a", "b", "c"]);
        let first = pop("del1", "g1", 10);
        assert_eq!(txns(&first), ["a", "b", "c"]);
        ack_all(&first, "completed", Some("g1"));
        let d = delete(pid, "b");
        assert_eq!(d["success"], true);
        assert_eq!(d["message"], "Message deleted successfully");
        assert_eq!(d["deletedOffsets"], json!([1]));
        // A second group never sees it, and its cursor passes it.
        let second = pop("del1", "g2", 10);
        assert_eq!(txns(&second), ["a", "c"]);
        ack_all(&second, "completed", Some("g2"));
        assert_eq!(committed(pid, "g2"), 2);
        assert_eq!(pop("del1", "g2", 10)["messages"], json!([]));
        // The framed answer leaves it out too: one claim per run around it.
        let framed = Spi::get_one::<Vec<u8>>("SELECT queen.pop_frames('del1', 'p', 'g3', 10)")
            .unwrap()
            .unwrap();
        let answer = queen_frames::pop_body::decode_pop_answer(&framed).unwrap();
        let runs: Vec<(u64, u64)> = answer.claims.iter().map(|c| (c.start, c.end)).collect();
        assert_eq!(runs, [(0, 0), (2, 2)]);
    }

    #[pg_test]
    fn a_deleted_run_at_the_cursor_is_passed_within_one_pop() {
        let q = "del2";
        push(q, &["a"]);
        push(q, &["b"]);
        let pid = push(q, &["c"]);
        delete(pid, "a");
        delete(pid, "b");
        let popped = pop(q, "g", 1);
        assert_eq!(txns(&popped), ["c"]);
        ack_all(&popped, "completed", Some("g"));
        assert_eq!(committed(pid, "g"), 2);
        // Queue mode skips them as well.
        let qm = Spi::get_one::<Json>("SELECT queen.pop('del2', NULL, NULL, 10, '{}')")
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(txns(&qm), ["c"]);
    }

    #[pg_test]
    fn deleting_a_message_while_it_is_leased_stops_its_redelivery() {
        let pid = push("del3", &["a", "b"]);
        let popped = pop("del3", "g", 10);
        assert_eq!(txns(&popped), ["a", "b"]);
        // Deleted while the pop's lease holds it; then the lease runs out.
        delete(pid, "a");
        Spi::run(
            "UPDATE queen.log_cursor_states SET lease_expires_at = now() - interval '1 second'",
        )
        .unwrap();
        let again = pop("del3", "g", 10);
        assert_eq!(txns(&again), ["b"]);
        // b was handed out with a: this is its second delivery.
        assert_eq!(again["messages"][0]["deliveryAttempt"], 2);
        ack_all(&again, "completed", Some("g"));
        assert_eq!(committed(pid, "g"), 1);
        // The old lease's ack of the deleted one changes nothing.
        let late = ack_all(&popped, "completed", Some("g"));
        assert_eq!(late.as_array().unwrap().len(), 2);
        assert_eq!(committed(pid, "g"), 1);
    }

    #[pg_test]
    fn deleting_a_dead_letter_deletes_its_rows_and_the_message() {
        let pid = push("del4", &["a", "b"]);
        let popped = pop("del4", "g", 10);
        ack_all(&popped, "dlq", Some("g"));
        let got = js(&format!("SELECT queen.message_get({pid}, 'a')"));
        assert_eq!(got["status"], "dead_letter");
        assert_eq!(got["data"], json!({"t": "a"}));
        assert_eq!(got["partitionId"], pid.to_string());
        assert_eq!(got["queuePath"], "del4/p");
        let d = delete(pid, "a");
        assert_eq!(d["deadLettersDeleted"], 1);
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_dlq \
                  WHERE partition_id = {pid} AND transaction_id = 'a'"
            )),
            0
        );
        // A new group does not get it.
        assert_eq!(txns(&pop("del4", "g2", 10)), ["b"]);
    }

    #[pg_test]
    fn retention_drops_tombstones_with_their_segment() {
        let q = "del5";
        push(q, &["a", "b"]);
        let pid = push(q, &["c"]);
        delete(pid, "a");
        delete(pid, "c");
        Spi::run(&format!(
            "UPDATE queen.log_segments SET created_at = created_at - interval '2 hours'
              WHERE partition_id = {pid} AND base_offset = 0;
             UPDATE queen.log_partitions SET oldest_live_at = oldest_live_at - interval '2 hours'
              WHERE id = {pid}"
        ))
        .unwrap();
        let r = js(&format!(
            "SELECT queen_internal.log_retention_step_v1(\
               {pid}, now() - interval '1 hour', NULL, 100)::json"
        ));
        assert_eq!(r["deleted"], 1);
        // The first segment's tombstone went with it; the kept one's stayed.
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_deleted WHERE partition_id = {pid}"
            )),
            1
        );
        assert_eq!(
            n(&format!(
                "SELECT message_offset FROM queen.log_deleted WHERE partition_id = {pid}"
            )),
            2
        );
    }

    #[pg_test]
    fn a_deleted_head_leaves_the_next_message_its_delivery_count() {
        let q = "del6";
        let pid = push(q, &["a", "b"]);
        for attempt in 1..=2 {
            let popped = pop(q, "g", 10);
            assert_eq!(txns(&popped), ["a", "b"]);
            assert_eq!(popped["messages"][1]["deliveryAttempt"], attempt);
            ack_all(&popped, "retry", Some("g"));
        }
        // The head goes: the cursor steps over it, b keeps its count.
        delete(pid, "a");
        let third = pop(q, "g", 10);
        assert_eq!(txns(&third), ["b"]);
        assert_eq!(third["messages"][0]["deliveryAttempt"], 3);
        // A message never handed out still starts at 1.
        ack_all(&third, "completed", Some("g"));
        push(q, &["c"]);
        assert_eq!(pop(q, "g", 10)["messages"][0]["deliveryAttempt"], 1);
    }

    #[pg_test]
    fn a_batch_of_one_after_a_deleted_head_is_a_first_delivery() {
        let q = "del7";
        let pid = push(q, &["a", "b"]);
        let popped = pop(q, "g", 1);
        assert_eq!(txns(&popped), ["a"]);
        ack_all(&popped, "retry", Some("g"));
        delete(pid, "a");
        // b was never handed out.
        let next = pop(q, "g", 1);
        assert_eq!(txns(&next), ["b"]);
        assert_eq!(next["messages"][0]["deliveryAttempt"], 1);
    }

    #[pg_test]
    fn a_message_deleted_while_leased_is_not_dead_lettered() {
        let q = "del8";
        let pid = push(q, &["a", "b"]);
        let popped = pop(q, "g", 10);
        delete(pid, "a");
        let acked = ack_all(&popped, "dlq", Some("g"));
        assert_eq!(acked[0]["success"], true);
        assert_eq!(acked[0]["dlq"], false);
        assert!(
            acked[0]["warning"]
                .as_str()
                .is_some_and(|w| w.contains("was deleted; it is not dead-lettered")),
            "{acked}"
        );
        assert_eq!(acked[1]["dlq"], true);
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_dlq WHERE partition_id = {pid} AND transaction_id = 'a'"
            )),
            0
        );
        assert_eq!(committed(pid, "g"), 1);
    }

    #[pg_test]
    fn a_deleted_message_past_its_retries_is_not_dead_lettered() {
        let q = "del9";
        Spi::run("SELECT queen.configure('del9', '{\"retryLimit\": 0}')").unwrap();
        let pid = push(q, &["a", "b"]);
        let popped = pop(q, "g", 10);
        delete(pid, "a");
        let acked = ack_all(&popped, "failed", Some("g"));
        // a is passed without a dead letter; b, past its retries, gets one.
        assert_eq!(acked[0]["dlq"], false);
        assert!(acked[0]["warning"].as_str().is_some(), "{acked}");
        assert_eq!(acked[1]["dlq"], true);
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_dlq WHERE partition_id = {pid}"
            )),
            1
        );
        assert_eq!(committed(pid, "g"), 1);
    }

    #[pg_test]
    fn a_dead_letter_of_a_deleted_message_is_not_moved_back() {
        let q = "del10";
        let pid = push(q, &["a"]);
        let popped = pop(q, "g", 10);
        ack_all(&popped, "dlq", Some("g"));
        let id = n(&format!(
            "SELECT id FROM queen.log_dlq WHERE partition_id = {pid}"
        ));
        // A tombstone written beside its dead letter (as a 0.2.0-era row
        // could be left): the move finds no message to put back.
        Spi::run(&format!(
            "INSERT INTO queen.log_deleted (partition_id, message_offset, transaction_id) \
             VALUES ({pid}, 0, 'a')"
        ))
        .unwrap();
        let moved = crate::pg::spi::spi(|c| {
            crate::engine::dlq::move_back(c, id, &crate::engine::dlq::MoveTo::default()).is_some()
        });
        assert!(!moved);
        assert_eq!(
            n(&format!(
                "SELECT COALESCE(t.end_offset, p.log_start - 1) FROM queen.log_partitions p \
                 LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s \
                 WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true WHERE p.id = {pid}"
            )),
            0
        );
    }

    /// Pushes one message of about `size` bytes of text that does not
    /// compress, in a push (a segment) of its own.
    fn push_big(queue: &str, txn: &str, size: usize) {
        let mut x: u64 = txn.bytes().fold(0x9e37_79b9, |a, b| a * 31 + b as u64);
        let text: String = (0..size)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                char::from(b'a' + (x >> 59) as u8 % 26)
            })
            .collect();
        Spi::get_one_with_args::<Json>(
            "SELECT queen.push($1)",
            &[JsonB(
                json!([{"queue": queue, "partition": "p", "transactionId": txn,
                            "payload": {"t": text}}]),
            )
            .into()],
        )
        .unwrap();
    }

    fn list(filters: Value) -> Value {
        Spi::get_one_with_args::<Json>("SELECT queen.messages_list($1)", &[JsonB(filters).into()])
            .unwrap()
            .unwrap()
            .0
    }

    #[pg_test]
    fn a_status_listing_stops_at_its_byte_bound_and_reads_on_from_its_cursor() {
        let q = "bytes1";
        for t in ["a", "b", "c"] {
            push_big(q, t, 1500);
        }
        Spi::run("SET LOCAL queen.messages_scan_max_bytes = 1024").unwrap();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..5 {
            let mut filters = json!({"queue": q, "status": "pending", "limit": 10});
            if let Some(c) = &cursor {
                filters["cursor"] = json!(c);
            }
            let page = list(filters);
            // One segment per page: the second would pass the bound.
            assert_eq!(page["total"], 1, "{page}");
            seen.extend(txns(&page));
            cursor = page["cursor"].as_str().map(str::to_owned);
            assert_eq!(page["hasMore"], cursor.is_some());
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(seen, ["c", "b", "a"]);
        // Within the bound, one page holds them all and says there is no more.
        Spi::run("SET LOCAL queen.messages_scan_max_bytes = 1048576").unwrap();
        let page = list(json!({"queue": q, "status": "pending", "limit": 10}));
        assert_eq!(txns(&page), ["c", "b", "a"]);
        assert_eq!(page["hasMore"], false);
        assert_eq!(page["cursor"], Value::Null);
        // A full page says more may follow.
        let page = list(json!({"queue": q, "status": "pending", "limit": 2}));
        assert_eq!(page["hasMore"], true);
    }

    #[pg_test]
    fn a_cursor_carries_the_offset_left_to_pass() {
        let q = "bytes2";
        for t in ["a", "b", "c"] {
            push_big(q, t, 1500);
        }
        Spi::run("SET LOCAL queen.messages_scan_max_bytes = 1024").unwrap();
        // offset 1 passes c in the first page; the cursor then reads b.
        let first = list(json!({"queue": q, "status": "pending", "offset": 1}));
        assert_eq!(first["total"], 0);
        assert_eq!(first["hasMore"], true);
        let second = list(json!({"queue": q, "status": "pending", "cursor": first["cursor"]}));
        assert_eq!(txns(&second), ["b"]);
    }

    #[pg_test(error = "filters.cursor: \"12.x\" is not a cursor a listing answered")]
    fn a_bad_cursor_is_refused() {
        list(json!({"cursor": "12.x"}));
    }

    #[pg_test(
        error = "filters.from: \"yesterday\" is not an ISO 8601 timestamp (such as 2026-01-31T12:00:00Z)"
    )]
    fn the_listing_refuses_a_from_that_is_not_iso() {
        list(json!({"from": "yesterday"}));
    }

    #[pg_test(
        error = "filters.to: \"2026-02-30\" is not an ISO 8601 timestamp (such as 2026-01-31T12:00:00Z)"
    )]
    fn the_listing_refuses_a_date_that_does_not_exist() {
        list(json!({"to": "2026-02-30"}));
    }

    #[pg_test(
        error = "options.from: \"yesterday\" is not an ISO 8601 timestamp (such as 2026-01-31T12:00:00Z)"
    )]
    fn the_dead_letter_listing_refuses_a_from_that_is_not_iso() {
        js("SELECT queen.dlq_list('{\"from\": \"yesterday\"}')");
    }

    #[pg_test(
        error = "options.to: \"garbage\" is not an ISO 8601 timestamp (such as 2026-01-31T12:00:00Z)"
    )]
    fn the_dead_letter_messages_refuse_a_bad_to() {
        js("SELECT queen.dlq_messages('{\"to\": \"garbage\"}')");
    }

    #[pg_test]
    fn the_listings_read_iso_timestamps_with_offsets() {
        let pid = push("iso1", &["a"]);
        let page = list(json!({"queue": "iso1", "from": "2000-01-01T00:00:00+02:00",
                               "to": "2999-01-01 00:00:00.5Z"}));
        assert_eq!(txns(&page), ["a"]);
        let dlq = js("SELECT queen.dlq_list('{\"from\": \"2000-01-01\"}')");
        assert!(dlq["messages"].is_array());
        assert!(pid > 0);
    }

    #[pg_test]
    fn the_listing_answers_each_status_newest_first() {
        let q = "list1";
        push(q, &["a", "b"]);
        let pid = push(q, &["c"]);
        let popped = pop(q, "g", 1);
        ack_all(&popped, "completed", Some("g"));
        let leased = pop(q, "g", 1);
        assert_eq!(txns(&leased), ["b"]);
        let list = js("SELECT queen.messages_list('{\"queue\": \"list1\"}')");
        let got: Vec<(String, String)> = list["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["transactionId"].as_str().unwrap().to_owned(),
                    m["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("c".to_owned(), "pending".to_owned()),
                ("b".to_owned(), "processing".to_owned()),
                ("a".to_owned(), "completed".to_owned())
            ]
        );
        assert_eq!(list["total"], 3);
        assert_eq!(list["mode"]["type"], "bus");
        assert_eq!(list["messages"][0]["partitionId"], pid.to_string());
        assert_eq!(
            list["messages"][0]["busStatus"],
            json!({"consumedBy": 0, "totalGroups": 1})
        );
        let done =
            js("SELECT queen.messages_list('{\"queue\": \"list1\", \"status\": \"completed\"}')");
        assert_eq!(done["total"], 1);
        let page =
            js("SELECT queen.messages_list('{\"queue\": \"list1\", \"limit\": 1, \"offset\": 1}')");
        assert_eq!(page["messages"][0]["transactionId"], "b");
        // A deleted message is not listed.
        delete(pid, "c");
        let after = js("SELECT queen.messages_list('{\"queue\": \"list1\"}')");
        assert_eq!(after["total"], 2);
    }

    #[pg_test(
        error = "filters.status: \"done\" is not one of pending, processing, completed, dead_letter"
    )]
    fn the_listing_refuses_an_unknown_status() {
        js("SELECT queen.messages_list('{\"status\": \"done\"}')");
    }

    #[pg_test(error = "message \"999999/x\" does not exist")]
    fn an_unknown_message_is_not_found() {
        js("SELECT queen.message_get(999999, 'x')");
    }

    #[pg_test]
    fn a_trace_is_read_back_by_message_and_by_name() {
        let pid = push("tr1", &["a"]);
        let body = json!({"transactionId": "a", "partitionId": pid.to_string(),
                          "consumerGroup": "g", "traceNames": ["order-1", "order-1", "flow"],
                          "eventType": "step", "data": {"n": 1}});
        let rec =
            Spi::get_one_with_args::<Json>("SELECT queen.trace_record($1)", &[JsonB(body).into()])
                .unwrap()
                .unwrap()
                .0;
        assert_eq!(rec["success"], true);
        let id = rec["traceId"].as_str().unwrap().to_owned();
        // One transaction: the first trace is made older than the second.
        Spi::run(
            "UPDATE queen.message_traces SET created_at = created_at - interval '1 minute';
             UPDATE queen.message_trace_names SET created_at = created_at - interval '1 minute'",
        )
        .unwrap();
        Spi::get_one_with_args::<Json>(
            "SELECT queen.trace_record($1)",
            &[JsonB(json!({"transactionId": "a", "partitionId": pid,
                           "traceNames": "flow", "data": {"n": 2}}))
            .into()],
        )
        .unwrap();
        let mine = js(&format!("SELECT queen.traces_for_message({pid}, 'a')"));
        let traces = mine["traces"].as_array().unwrap();
        assert_eq!(traces.len(), 2);
        assert_eq!(traces[0]["id"], id.as_str());
        assert_eq!(traces[0]["event_type"], "step");
        assert_eq!(traces[0]["data"], json!({"n": 1}));
        assert_eq!(traces[0]["trace_names"], json!(["flow", "order-1"]));
        assert_eq!(traces[1]["consumer_group"], "__QUEUE_MODE__");
        assert_eq!(traces[1]["event_type"], "info");
        let by = js("SELECT queen.traces_by_name('flow')");
        assert_eq!(by["total"], 2);
        assert_eq!(by["pagination"], json!({"limit": 100, "offset": 0}));
        assert_eq!(by["traces"][0]["queue_name"], "tr1");
        assert_eq!(by["traces"][0]["partition_id"], pid.to_string());
        assert_eq!(by["traces"][0]["message_payload"], Value::Null);
        let page = js("SELECT queen.traces_by_name('flow', 1, 1)");
        assert_eq!(page["traces"][0]["data"], json!({"n": 2}));
        let names = js("SELECT queen.trace_names()");
        assert_eq!(names["total"], 2);
        let flow = names["trace_names"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["trace_name"] == "flow")
            .unwrap()
            .clone();
        assert_eq!(flow["trace_count"], 2);
        assert_eq!(flow["message_count"], 1);
        assert_eq!(
            js("SELECT queen.traces_for_message(1, 'none')"),
            json!({"traces": []})
        );
    }

    #[pg_test(error = "data: is required")]
    fn a_trace_needs_data() {
        js("SELECT queen.trace_record('{\"transactionId\": \"a\", \"partitionId\": \"1\"}')");
    }

    #[pg_test(error = "partitionId: is required")]
    fn a_trace_needs_a_partition() {
        js("SELECT queen.trace_record('{\"transactionId\": \"a\", \"data\": {}}')");
    }

    #[pg_test(error = "row_limit: 5000 is not between 1 and queen.traces_max_page (1000)")]
    fn a_trace_page_is_bounded_by_its_setting() {
        js("SELECT queen.traces_by_name('x', 5000)");
    }

    #[pg_test]
    fn the_metrics_purge_ages_out_traces() {
        let pid = push("tr2", &["a"]);
        for _ in 0..3 {
            Spi::get_one_with_args::<Json>(
                "SELECT queen.trace_record($1)",
                &[JsonB(json!({"transactionId": "a", "partitionId": pid,
                               "traceNames": ["x"], "data": {}}))
                .into()],
            )
            .unwrap();
        }
        Spi::run(
            "UPDATE queen.message_traces SET created_at = now() - interval '10 days'
              WHERE id IN (SELECT id FROM queen.message_traces LIMIT 2)",
        )
        .unwrap();
        let r = Spi::get_one::<JsonB>(
            "SELECT queen_internal.log_metrics_purge_step_v1(now() - interval '1 day', 1)",
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(r["deleted"], 1);
        assert_eq!(r["done"], false);
        Spi::get_one::<JsonB>(
            "SELECT queen_internal.log_metrics_purge_step_v1(now() - interval '1 day', 100)",
        )
        .unwrap();
        assert_eq!(n("SELECT count(*) FROM queen.message_traces"), 1);
        assert_eq!(n("SELECT count(*) FROM queen.message_trace_names"), 1);
    }

    /// A payload `Value` can not hold (a lone surrogate escape) and one
    /// nested 200 levels deep are valid JSON a push accepts: the message
    /// readers and the dead-letter list answer them as they were pushed,
    /// not as null and not as an error.
    #[pg_test]
    fn the_readers_answer_a_payload_as_it_was_pushed() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let lone = r#"{"s": "\ud800"}"#;
        let items = format!(
            r#"[{{"queue": "poison", "partition": "p", "transactionId": "lone", "payload": {lone}}},
               {{"queue": "poison", "partition": "p", "transactionId": "deep", "payload": {deep}}}]"#
        );
        Spi::get_one_with_args::<Json>("SELECT queen.push_text($1)", &[items.as_str().into()])
            .unwrap();
        let pid = pid("poison");
        let text = |sql: &str| Spi::get_one::<String>(sql).unwrap().unwrap();
        let listed = text(r#"SELECT queen.messages_list('{"queue": "poison"}')::text"#);
        assert!(
            listed.contains(lone),
            "the list keeps the lone surrogate: {listed}"
        );
        assert!(listed.contains(&deep), "the list keeps the deep payload");
        for (txn, payload) in [("lone", lone), ("deep", deep.as_str())] {
            let got = text(&format!("SELECT queen.message_get({pid}, '{txn}')::text"));
            assert_eq!(
                got.matches(payload).count(),
                2,
                "{txn}: data and payload, as pushed: {got}"
            );
        }
        // The pop's answer carries the payloads as pushed too: read as text.
        let popped = text("SELECT queen.pop('poison', NULL, 'g', 10, '{}')::text");
        assert!(popped.contains(lone) && popped.contains(&deep), "{popped}");
        let at = popped.find(r#""leaseId":""#).expect("a lease") + r#""leaseId":""#.len();
        let lease = &popped[at..at + 36];
        let acks: Vec<Value> = ["lone", "deep"]
            .iter()
            .map(|t| {
                json!({"transactionId": t, "partitionId": pid.to_string(), "leaseId": lease,
                       "status": "dlq", "consumerGroup": "g"})
            })
            .collect();
        crate::tests::support::ack(Value::Array(acks));
        let dead = text(r#"SELECT queen.dlq_list('{"queue": "poison"}')::text"#);
        assert!(dead.contains(lone), "the dead letter keeps it: {dead}");
        assert!(
            dead.contains(&deep),
            "the dead letter keeps the deep payload"
        );
    }
}
