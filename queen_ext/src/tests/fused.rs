//! Fused calls inside PostgreSQL: many push, ack and renewal requests in
//! one call answer each as the request alone is answered; a request that
//! fails fails alone.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::pg::subxact::in_subtransaction;
    use crate::tests::support::{js, n};

    /// `queen.push_fused` over JSON bodies (and binary ones where `binary`
    /// says so), one producer each.
    fn fused_bodies(
        bodies: Vec<Vec<u8>>,
        binary: Vec<bool>,
        producers: Vec<Option<&str>>,
    ) -> Value {
        let bodies: Vec<Option<Vec<u8>>> = bodies.into_iter().map(Some).collect();
        let binary: Vec<Option<bool>> = binary.into_iter().map(Some).collect();
        let producers: Vec<Option<String>> = producers
            .into_iter()
            .map(|p| p.map(str::to_owned))
            .collect();
        Spi::get_one_with_args::<Json>(
            "SELECT queen.push_fused($1, $2, $3)",
            &[bodies.into(), binary.into(), producers.into()],
        )
        .unwrap()
        .unwrap()
        .0
    }

    fn fused(bodies: &[&str]) -> Value {
        fused_bodies(
            bodies.iter().map(|b| b.as_bytes().to_vec()).collect(),
            vec![false; bodies.len()],
            vec![None; bodies.len()],
        )
    }

    fn push_text(body: &str) -> Value {
        Spi::get_one_with_args::<Json>("SELECT queen.push_text($1)", &[body.into()])
            .unwrap()
            .unwrap()
            .0
    }

    fn pop(queue: &str, batch: i32) -> Value {
        Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, NULL, NULL, $2, '{}')",
            &[queue.into(), batch.into()],
        )
        .unwrap()
        .unwrap()
        .0
    }

    /// An answer with the ids minted per push taken out.
    fn minted_out(mut v: Value) -> Value {
        for item in v.as_array_mut().unwrap() {
            let o = item.as_object_mut().unwrap();
            o.remove("messageId");
            o.remove("message_id");
        }
        v
    }

    #[pg_test]
    fn fused_pushes_answer_as_each_push_alone() {
        let bodies = [
            r#"[{"queue": "QUEUE", "partition": "a", "payload": 1, "transactionId": "t1"}]"#,
            r#"[{"queue": "QUEUE", "partition": "b", "payload": 2, "transactionId": "t2"},
                {"queue": "QUEUE", "partition": "a", "payload": 3, "transactionId": "t3"}]"#,
            r#"{"items": [{"queue": "QUEUE", "partition": "a", "payload": 4, "transactionId": "t4"}]}"#,
        ];
        let alone: Vec<Value> = bodies
            .iter()
            .map(|b| minted_out(push_text(&b.replace("QUEUE", "alone"))))
            .collect();
        let together: Vec<String> = bodies.iter().map(|b| b.replace("QUEUE", "fused")).collect();
        let answers = fused(&together.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(answers.as_array().unwrap().len(), 3);
        for (k, a) in answers.as_array().unwrap().iter().enumerate() {
            let mut want = alone[k].to_string().replace("\"alone\"", "\"fused\"");
            // Partition ids differ between the two queues.
            let got = minted_out(a["ok"].clone());
            for (w, g) in alone[k]
                .as_array()
                .unwrap()
                .iter()
                .zip(got.as_array().unwrap())
            {
                want = want.replace(
                    &format!("\"partitionId\":{}", w["partitionId"]),
                    &format!("\"partitionId\":{}", g["partitionId"]),
                );
            }
            assert_eq!(
                got,
                serde_json::from_str::<Value>(&want).unwrap(),
                "request {k}"
            );
        }
        // Partition a holds t1, t3, t4 in that order, in one segment.
        let popped = pop("fused", 10);
        let order: Vec<&str> = popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["transactionId"].as_str().unwrap())
            .collect();
        assert!(order == ["t1", "t3", "t4"] || order == ["t2"], "{order:?}");
        assert_eq!(
            n("SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'fused' AND p.name = 'a'"),
            1
        );
    }

    #[pg_test]
    fn single_message_requests_to_one_partition_become_one_segment_in_request_order() {
        let bodies: Vec<String> = (0..20)
            .map(|k| format!(r#"[{{"queue": "one", "payload": {k}}}]"#))
            .collect();
        let answers = fused(&bodies.iter().map(String::as_str).collect::<Vec<_>>());
        for (k, a) in answers.as_array().unwrap().iter().enumerate() {
            assert_eq!(a["ok"][0]["offset"], k as i64);
            assert_eq!(a["ok"][0]["index"], 0);
            assert_eq!(a["ok"][0]["status"], "queued");
        }
        assert_eq!(n("SELECT count(*) FROM queen.log_segments"), 1);
        let popped = pop("one", 20);
        let data: Vec<i64> = popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["data"].as_i64().unwrap())
            .collect();
        assert_eq!(data, (0..20).collect::<Vec<i64>>());
    }

    #[pg_test]
    fn a_body_that_does_not_parse_is_refused_alone() {
        let answers = fused(&[
            r#"[{"queue": "bad", "payload": 1}]"#,
            "[",
            r#"[{"queue": "bad", "payload": 2}]"#,
            r#"[{"queue": "", "payload": 3}]"#,
            r#"[{"queue": "bad", "partition": 7, "payload": 4}]"#,
        ]);
        let a = answers.as_array().unwrap();
        assert_eq!(a[0]["ok"][0]["offset"], 0);
        assert_eq!(a[2]["ok"][0]["offset"], 1);
        for k in [1, 3, 4] {
            assert!(a[k].get("ok").is_none(), "{}", a[k]);
            let state = a[k]["sqlstate"].as_str().unwrap();
            assert!(
                state.starts_with("22") || state == "42804",
                "{state}: {}",
                a[k]
            );
            assert!(!a[k]["error"].as_str().unwrap().is_empty());
        }
        assert_eq!(
            n("SELECT sum(frame_count)::int8 FROM queen.log_segments"),
            2
        );
    }

    #[pg_test]
    fn a_request_the_engine_refuses_fails_alone_and_the_rest_commit() {
        // The producer name is checked where the push is written: the
        // request with the overlong one fails the call made together, and
        // each request is then made alone.
        let long = "p".repeat(2000);
        let answers = fused_bodies(
            vec![
                br#"[{"queue": "eng", "payload": 1}]"#.to_vec(),
                br#"[{"queue": "eng", "payload": 2}]"#.to_vec(),
                br#"[{"queue": "eng", "payload": 3}]"#.to_vec(),
            ],
            vec![false; 3],
            vec![Some("alice"), Some(&long), Some("carol")],
        );
        let a = answers.as_array().unwrap();
        assert_eq!(a[0]["ok"][0]["status"], "queued");
        assert_eq!(a[1]["sqlstate"], "22001", "{}", a[1]);
        assert_eq!(a[2]["ok"][0]["status"], "queued");
        let popped = pop("eng", 10);
        let m = popped["messages"].as_array().unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["producerSub"], "alice");
        assert_eq!(m[1]["producerSub"], "carol");
        assert_eq!(m[0]["data"], 1);
        assert_eq!(m[1]["data"], 3);
    }

    #[pg_test]
    fn each_request_is_stamped_with_its_own_producer() {
        let answers = fused_bodies(
            vec![
                br#"[{"queue": "who", "payload": "a1"}]"#.to_vec(),
                br#"[{"queue": "who", "payload": "b1"}]"#.to_vec(),
                br#"[{"queue": "who", "payload": "a2"}]"#.to_vec(),
                br#"[{"queue": "who", "payload": "n1"}]"#.to_vec(),
            ],
            vec![false; 4],
            vec![Some("alice"), Some("bob"), Some("alice"), None],
        );
        assert!(answers
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a.get("ok").is_some()));
        let popped = pop("who", 10);
        let by: Vec<(String, Value)> = popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["data"].as_str().unwrap().to_owned(),
                    m["producerSub"].clone(),
                )
            })
            .collect();
        let producer_of = |d: &str| by.iter().find(|(x, _)| x == d).unwrap().1.clone();
        assert_eq!(producer_of("a1"), "alice");
        assert_eq!(producer_of("a2"), "alice");
        assert_eq!(producer_of("b1"), "bob");
        assert_eq!(producer_of("n1"), Value::Null);
        // One producer's requests keep their order.
        let a1 = by.iter().position(|(d, _)| d == "a1").unwrap();
        let a2 = by.iter().position(|(d, _)| d == "a2").unwrap();
        assert!(a1 < a2);
    }

    #[pg_test]
    fn a_transaction_id_sent_by_two_requests_is_stored_once() {
        let answers = fused(&[
            r#"[{"queue": "dup", "payload": 1, "transactionId": "same"}]"#,
            r#"[{"queue": "dup", "payload": 2, "transactionId": "same"}]"#,
            r#"[{"queue": "dup", "payload": 3, "transactionId": "other"}]"#,
        ]);
        let a = answers.as_array().unwrap();
        assert_eq!(a[0]["ok"][0]["status"], "queued");
        assert_eq!(a[1]["ok"][0]["status"], "duplicate");
        assert_eq!(a[1]["ok"][0]["messageId"], a[0]["ok"][0]["messageId"]);
        assert_eq!(a[1]["ok"][0]["offset"], a[0]["ok"][0]["offset"]);
        assert_eq!(a[2]["ok"][0]["offset"], 1);
        assert_eq!(
            n("SELECT sum(frame_count)::int8 FROM queen.log_segments"),
            2
        );
        // A later push of the same id, alone, is a duplicate too.
        let later = push_text(r#"[{"queue": "dup", "payload": 9, "transactionId": "same"}]"#);
        assert_eq!(later[0]["status"], "duplicate");
    }

    #[pg_test]
    fn binary_and_json_bodies_fuse_and_answer_in_their_own_shapes() {
        use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup, PushItem};
        let binary = |counts_only: bool, txn: &str| {
            encode_push_body(
                &[PushGroup {
                    queue: "mixed".into(),
                    partition: "Default".into(),
                    messages: GroupMessages::Items(vec![PushItem {
                        transaction_id: Some(txn.into()),
                        payload: b"{\"k\":1}".to_vec(),
                    }]),
                }],
                counts_only,
            )
            .unwrap()
        };
        let answers = fused_bodies(
            vec![
                binary(false, "b1"),
                br#"[{"queue": "mixed", "payload": 2, "transactionId": "j1"}]"#.to_vec(),
                binary(true, "b2"),
                b"QPB1 not really".to_vec(),
            ],
            vec![true, false, true, true],
            vec![None; 4],
        );
        let a = answers.as_array().unwrap();
        assert_eq!(a[0]["ok"][0]["transactionId"], "b1");
        assert_eq!(a[0]["ok"][0]["offset"], 0);
        assert_eq!(a[1]["ok"][0]["offset"], 1);
        assert_eq!(
            a[2]["ok"],
            json!({"count": 1, "queued": 1, "duplicate": 0, "error": 0})
        );
        assert!(
            a[3]["sqlstate"].as_str().unwrap().starts_with("22"),
            "{}",
            a[3]
        );
        assert_eq!(
            n("SELECT sum(frame_count)::int8 FROM queen.log_segments"),
            3
        );
    }

    #[pg_test]
    fn a_paused_push_surface_refuses_every_request_with_its_detail() {
        js(r#"SELECT queen.system_switches('maintenance', '{"enabled": true}')"#);
        let answers = fused(&[
            r#"[{"queue": "p", "payload": 1}]"#,
            r#"[{"queue": "p", "payload": 2}]"#,
        ]);
        for a in answers.as_array().unwrap() {
            assert_eq!(a["sqlstate"], "57000", "{a}");
            assert!(a["detail"].is_string(), "{a}");
        }
        assert_eq!(n("SELECT count(*) FROM queen.log_segments"), 0);
    }

    #[pg_test]
    fn fused_acks_answer_each_request_and_refuse_a_stale_lease_alone() {
        push_text(
            r#"[{"queue": "ak", "partition": "a", "payload": 1}, {"queue": "ak", "partition": "b", "payload": 2}]"#,
        );
        let one = pop("ak", 1);
        let two = pop("ak", 1);
        let ack_of = |p: &Value, lease: &Value| {
            let m = &p["messages"][0];
            json!([{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": lease}])
                .to_string()
        };
        let good = ack_of(&one, &one["messages"][0]["leaseId"]);
        let stale = ack_of(&two, &json!("00000000-0000-0000-0000-000000000000"));
        let bodies: Vec<Option<String>> = vec![Some(good), Some(stale), Some("[".into())];
        let answers =
            Spi::get_one_with_args::<Json>("SELECT queen.ack_fused($1)", &[bodies.into()])
                .unwrap()
                .unwrap()
                .0;
        let a = answers.as_array().unwrap();
        assert_eq!(a[0]["ok"][0]["success"], true, "{}", a[0]);
        assert_eq!(a[1]["ok"][0]["success"], false, "{}", a[1]);
        assert!(a[1]["ok"][0]["error"].is_string(), "{}", a[1]);
        assert!(
            a[2]["sqlstate"].as_str().unwrap().starts_with("22"),
            "{}",
            a[2]
        );
        // Only the first ack moved its cursor.
        assert_eq!(
            n("SELECT count(*) FROM queen.log_consumers WHERE committed IS NOT NULL AND committed >= 0"),
            1
        );
    }

    #[pg_test]
    fn fused_renewals_answer_each_lease() {
        push_text(r#"[{"queue": "rn", "payload": 1}]"#);
        let popped = pop("rn", 1);
        let lease = popped["messages"][0]["leaseId"]
            .as_str()
            .unwrap()
            .to_owned();
        let leases: Vec<Option<String>> = vec![
            Some(lease.clone()),
            Some("00000000-0000-0000-0000-000000000000".into()),
            Some("not-a-uuid".into()),
        ];
        let seconds: Vec<Option<i32>> = vec![Some(120), None, None];
        let answers = Spi::get_one_with_args::<Json>(
            "SELECT queen.renew_fused($1, $2)",
            &[leases.into(), seconds.into()],
        )
        .unwrap()
        .unwrap()
        .0;
        let a = answers.as_array().unwrap();
        let alone = js(&format!("SELECT queen.renew_lease('{lease}', 120)"));
        assert_eq!(a[0]["ok"]["renewed"], alone["renewed"], "{}", a[0]);
        assert!(a[0]["ok"]["lease_expires_at"].is_string(), "{}", a[0]);
        assert_eq!(a[1]["ok"]["renewed"], 0, "{}", a[1]);
        assert_eq!(a[2]["sqlstate"], "22P02", "{}", a[2]);
    }

    #[pg_test]
    fn a_fused_call_is_bounded_and_its_arrays_must_match() {
        Spi::run("SET queen.fused_max_requests = 2").unwrap();
        let err = in_subtransaction(|| fused(&["[]", "[]", "[]"])).unwrap_err();
        assert_eq!(err.sqlstate, "54000");
        assert!(
            err.message.contains("queen.fused_max_requests"),
            "{}",
            err.message
        );
        Spi::run("RESET queen.fused_max_requests").unwrap();
        let err = in_subtransaction(|| {
            fused_bodies(
                vec![b"[]".to_vec(), b"[]".to_vec()],
                vec![false],
                vec![None, None],
            )
        })
        .unwrap_err();
        assert_eq!(err.sqlstate, "22023");
        assert!(err.message.starts_with("binary:"), "{}", err.message);
        let empty = Spi::get_one_with_args::<JsonB>(
            "SELECT queen.push_fused('{}'::bytea[], '{}'::bool[], '{}'::text[])::jsonb",
            &[],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(empty, json!([]));
    }

    #[pg_test]
    fn two_groups_for_one_partition_in_one_binary_push_deduplicate_each_other() {
        use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup, PushItem};
        let group = |payload: &[u8]| PushGroup {
            queue: "twice".into(),
            partition: "Default".into(),
            messages: GroupMessages::Items(vec![PushItem {
                transaction_id: Some("T".into()),
                payload: payload.to_vec(),
            }]),
        };
        let body = encode_push_body(&[group(b"1"), group(b"2")], false).unwrap();
        let r = Spi::get_one_with_args::<Json>("SELECT queen.push_binary($1)", &[body.into()])
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(r[0]["status"], "queued", "{r}");
        assert_eq!(r[1]["status"], "duplicate", "{r}");
        assert_eq!(r[1]["messageId"], r[0]["messageId"]);
        assert_eq!(r[1]["offset"], r[0]["offset"]);
        assert_eq!(
            n("SELECT sum(frame_count)::int8 FROM queen.log_segments"),
            1
        );
    }

    #[pg_test]
    fn one_id_from_two_producers_in_one_fused_call_is_stored_once() {
        let answers = fused_bodies(
            vec![
                br#"[{"queue": "twop", "payload": 1, "transactionId": "T"}]"#.to_vec(),
                br#"[{"queue": "twop", "payload": 2, "transactionId": "T"}]"#.to_vec(),
            ],
            vec![false; 2],
            vec![Some("alice"), Some("bob")],
        );
        let a = answers.as_array().unwrap();
        assert_eq!(a[0]["ok"][0]["status"], "queued", "{answers}");
        assert_eq!(a[1]["ok"][0]["status"], "duplicate", "{answers}");
        assert_eq!(a[1]["ok"][0]["messageId"], a[0]["ok"][0]["messageId"]);
        let popped = pop("twop", 10);
        assert_eq!(popped["messages"].as_array().unwrap().len(), 1);
        assert_eq!(popped["messages"][0]["producerSub"], "alice");
    }

    #[pg_test]
    fn fused_acks_of_one_cursor_from_several_requests_settle_it() {
        push_text(
            r#"[{"queue": "oc", "payload": 1}, {"queue": "oc", "payload": 2}, {"queue": "oc", "payload": 3}]"#,
        );
        let popped = pop("oc", 3);
        let bodies: Vec<Option<String>> = popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                Some(
                    json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                           "leaseId": m["leaseId"], "status": "completed"})
                    .to_string(),
                )
            })
            .collect();
        let answers =
            Spi::get_one_with_args::<Json>("SELECT queen.ack_fused($1)", &[bodies.into()])
                .unwrap()
                .unwrap()
                .0;
        for (k, a) in answers.as_array().unwrap().iter().enumerate() {
            assert_eq!(a["ok"][0]["success"], true, "{a}");
            assert_eq!(a["ok"][0]["index"], 0, "{a}");
            assert_eq!(
                a["ok"][0]["transactionId"],
                popped["messages"][k]["transactionId"]
            );
        }
        assert_eq!(n("SELECT committed FROM queen.log_consumers"), 2);
    }

    /// The segments of `queue`'s one partition, (base, end, frames) in
    /// order.
    fn segments_of(queue: &str) -> Vec<(i64, i64, i32)> {
        Spi::connect(|c| {
            c.select(
                "SELECT s.base_offset, s.end_offset, s.frame_count FROM queen.log_segments s
                   JOIN queen.log_partitions p ON p.id = s.partition_id
                   JOIN queen.queues q ON q.id = p.queue_id
                  WHERE q.name = $1 ORDER BY s.base_offset",
                None,
                &[queue.into()],
            )
            .unwrap()
            .map(|r| {
                (
                    r.get::<i64>(1).unwrap().unwrap(),
                    r.get::<i64>(2).unwrap().unwrap(),
                    r.get::<i32>(3).unwrap().unwrap(),
                )
            })
            .collect()
        })
    }

    /// More than `queen.segment_max_bytes` for one partition, in one push or
    /// in many fused into one call, is written as consecutive segments under
    /// the limit: offsets dense, every message readable, in push order.
    #[pg_test]
    fn a_push_larger_than_a_segment_takes_several() {
        Spi::run("SET queen.segment_max_bytes = 65536").unwrap();
        let pad = "x".repeat(1000);
        let item = |q: &str, k: usize| {
            format!(
                r#"{{"queue": "{q}", "partition": "p", "transactionId": "t{k}", "payload": {{"k": {k}, "pad": "{pad}"}}}}"#
            )
        };
        let one: Vec<String> = (0..200).map(|k| item("big_one", k)).collect();
        push_text(&format!("[{}]", one.join(",")));
        let bodies: Vec<String> = (0..20)
            .map(|r| {
                format!(
                    "[{}]",
                    (0..10)
                        .map(|i| item("big_fused", r * 10 + i))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            })
            .collect();
        let answers = fused(&bodies.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            answers
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a.get("ok").is_some()),
            "{answers}"
        );
        for queue in ["big_one", "big_fused"] {
            let segs = segments_of(queue);
            assert!(segs.len() >= 4, "{queue}: {segs:?}");
            let mut next = 0;
            for &(base, end, frames) in &segs {
                assert_eq!(base, next, "{queue}: dense offsets {segs:?}");
                assert_eq!(end - base + 1, frames as i64);
                next = end + 1;
            }
            assert_eq!(next, 200, "{queue}");
            // Each message takes more than its 1000-byte pad as a frame.
            assert!(
                segs.iter()
                    .all(|&(_, _, frames)| frames as usize * 1000 <= 65536),
                "{queue}: a segment over the limit {segs:?}"
            );
            let popped = pop(queue, 1000);
            let ks: Vec<i64> = popped["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["data"]["k"].as_i64().unwrap())
                .collect();
            assert_eq!(ks, (0..200).collect::<Vec<i64>>(), "{queue}");
        }
    }

    /// A binary push body of `n` messages of 10 000 bytes each for `queue`,
    /// framed and compressed by the client (flag 8).
    fn packed_body(queue: &str, n: usize) -> Vec<u8> {
        use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup};
        let payload = format!("\"{}\"", "y".repeat(9_998));
        let ids: Vec<[u8; 16]> = (0..n).map(|_| queen_frames::new_message_id()).collect();
        let txns: Vec<String> = ids.iter().map(queen_frames::id_text).collect();
        let frames: Vec<queen_frames::FrameRef> = ids
            .iter()
            .zip(&txns)
            .map(|(id, txn)| queen_frames::FrameRef {
                flags: 0,
                message_id: *id,
                trace_id: None,
                transaction_id: txn,
                producer: None,
                payload: payload.as_bytes(),
            })
            .collect();
        let zstd = queen_frames::segment::encode_segment(frames.iter()).unwrap();
        encode_push_body(
            &[PushGroup {
                queue: queue.into(),
                partition: "p".into(),
                messages: GroupMessages::Packed {
                    count: n as u32,
                    zstd,
                },
            }],
            true,
        )
        .unwrap()
    }

    /// `queen.decompress_max_bytes` bounds what a whole fused call
    /// decompresses: each body fits alone, the three together do not, and
    /// the one past the budget is refused alone (22P03) while the others
    /// land.
    #[pg_test]
    fn a_fused_call_decompresses_within_one_budget() {
        // Each body decompresses to a little over 200 000 bytes.
        Spi::run("SET queen.decompress_max_bytes = 500000").unwrap();
        let alone = Spi::get_one_with_args::<Json>(
            "SELECT queen.push_binary($1)",
            &[packed_body("budget_alone", 20).into()],
        )
        .unwrap()
        .unwrap()
        .0;
        assert_eq!(alone["queued"], 20, "one body fits: {alone}");
        let a = fused_bodies(
            (0..3).map(|_| packed_body("budget", 20)).collect(),
            vec![true; 3],
            vec![None; 3],
        );
        assert_eq!(a[0]["ok"]["queued"], 20, "{a}");
        assert_eq!(a[1]["ok"]["queued"], 20, "{a}");
        assert_eq!(a[2]["sqlstate"], "22P03", "{a}");
        assert!(
            a[2]["error"].as_str().unwrap().contains("fused call"),
            "{a}"
        );
        assert_eq!(
            n("SELECT sum(s.frame_count)::int8 FROM queen.log_segments s
                 JOIN queen.log_partitions p ON p.id = s.partition_id
                 JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'budget'"),
            40
        );
    }
}
