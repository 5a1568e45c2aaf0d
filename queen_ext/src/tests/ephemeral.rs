//! Ephemeral queues inside PostgreSQL: the bounds under both policies, the
//! ttl, the retry limit, groups, autoAck, lease expiry, reset, delete, the
//! staleness of ids across incarnations (a crash is what emptying the
//! unlogged tables does), the bounded cleanup, and the SQLSTATEs of bad
//! input. Each test runs in one transaction.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::JsonB;
    use serde_json::{json, Value};

    use crate::tests::support::{js, n};

    fn call(sql: &str, args: Vec<pgrx::datum::DatumWithOid<'_>>) -> Value {
        Spi::get_one_with_args::<pgrx::Json>(sql, &args)
            .unwrap()
            .map(|j| j.0)
            .unwrap_or(Value::Null)
    }

    fn configure(queue: &str, options: Value) -> Value {
        call(
            "SELECT queen.ephemeral_configure($1, $2)",
            vec![queue.into(), JsonB(options).into()],
        )
    }

    fn push(queue: &str, payloads: &[Value]) -> Value {
        let messages: Vec<Value> = payloads.iter().map(|p| json!({"payload": p})).collect();
        call(
            "SELECT queen.ephemeral_push($1)",
            vec![JsonB(json!({"queue": queue, "messages": messages})).into()],
        )
    }

    fn pop(queue: &str, group: Option<&str>, batch: i64, auto_ack: bool) -> Vec<Value> {
        let a = call(
            "SELECT queen.ephemeral_pop($1, NULL, $2, $3, $4)",
            vec![queue.into(), group.into(), batch.into(), auto_ack.into()],
        );
        assert_eq!(a["queue"], queue);
        a["messages"].as_array().cloned().unwrap_or_default()
    }

    fn ack(queue: &str, group: Option<&str>, acks: Value) -> Vec<String> {
        let mut body = json!({"queue": queue, "acks": acks});
        if let Some(g) = group {
            body["group"] = json!(g);
        }
        let a = call("SELECT queen.ephemeral_ack($1)", vec![JsonB(body).into()]);
        a["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["outcome"].as_str().unwrap().to_owned())
            .collect()
    }

    fn queue_row(queue: &str) -> Value {
        js("SELECT queen.ephemeral_queues()::json")["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["queue"] == queue)
            .cloned()
            .unwrap_or(Value::Null)
    }

    fn depth(queue: &str) -> Value {
        call("SELECT queen.ephemeral_depth($1)", vec![queue.into()])
    }

    fn payloads(ms: &[Value]) -> Vec<Value> {
        ms.iter().map(|m| m["payload"].clone()).collect()
    }

    /// The SQLSTATE `sql` fails with ("ok" when it does not).
    fn state_of(sql: &str) -> String {
        Spi::run(
            "CREATE OR REPLACE FUNCTION pg_temp.state_of(q text) RETURNS text LANGUAGE plpgsql AS $$
             BEGIN EXECUTE q; RETURN 'ok'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$",
        )
        .unwrap();
        Spi::get_one_with_args::<String>("SELECT pg_temp.state_of($1)", &[sql.into()])
            .unwrap()
            .unwrap()
    }

    /// Rows of the ephemeral tables this transaction has updated and
    /// deleted.
    fn changed() -> (i64, i64) {
        let r = js("SELECT json_build_array(
                coalesce(sum(pg_stat_get_xact_tuples_updated(c.oid)), 0),
                coalesce(sum(pg_stat_get_xact_tuples_deleted(c.oid)), 0))
              FROM pg_class c
             WHERE c.relnamespace = 'queen'::regnamespace AND c.relkind = 'r'
               AND c.relname LIKE 'ephemeral%'");
        (r[0].as_i64().unwrap(), r[1].as_i64().unwrap())
    }

    /// Rows of `table` for the live queue `queue`.
    fn rows_of(table: &str, queue: &str) -> i64 {
        n(&format!(
            "SELECT count(*) FROM queen.{table} t JOIN queen.ephemeral_state s
              USING (incarnation) WHERE s.queue = '{queue}'"
        ))
    }

    /// Pushes, pops (leased and autoAck), acks (completed, failed, retry)
    /// and a redelivery write new rows and never update or delete one: a
    /// snapshot held open elsewhere then leaves no dead row behind them. The
    /// newest version is what every reader reads; the retention cycle
    /// deletes the rest, and the messages every group passed, once, and
    /// then waits until its deletions are reclaimable.
    #[pg_test]
    fn the_message_path_updates_and_deletes_no_row() {
        configure("e_mvcc", json!({"maxLength": 1000, "retryLimit": 3}));
        // For the_cycle_keeps_every_lease_still_held: one lease settled, one
        // handed back, one held.
        push("e_keep", &[json!(1), json!(2), json!(3)]);
        let keep = pop("e_keep", Some("g"), 3, false);
        assert_eq!(keep.len(), 3);
        let acks = json!([{"id": keep[0]["id"]}, {"id": keep[1]["id"], "status": "failed"}]);
        assert_eq!(ack("e_keep", Some("g"), acks), ["acked", "redelivered"]);
        // Both groups (g and queue mode) are known, then have read the
        // partition.
        assert!(pop("e_mvcc", Some("g"), 1, true).is_empty());
        assert!(pop("e_mvcc", None, 1, true).is_empty());
        push("e_mvcc", &[json!(0)]);
        assert_eq!(pop("e_mvcc", Some("g"), 1, true).len(), 1);
        assert_eq!(pop("e_mvcc", None, 1, true).len(), 1);
        let before = changed();
        for i in 0..20 {
            push("e_mvcc", &[json!(i), json!(i + 100)]);
            let got = pop("e_mvcc", Some("g"), 2, false);
            assert_eq!(payloads(&got), [json!(i), json!(i + 100)]);
            // The second fails once and is handed back, then redelivered.
            let first = json!([{"id": got[0]["id"]}, {"id": got[1]["id"], "status": "failed"}]);
            assert_eq!(ack("e_mvcc", Some("g"), first), ["acked", "redelivered"]);
            let again = pop("e_mvcc", Some("g"), 2, false);
            assert_eq!(payloads(&again), [json!(i + 100)]);
            assert_eq!(again[0]["attempts"], 2);
            assert_eq!(
                ack("e_mvcc", Some("g"), json!([{"id": again[0]["id"]}])),
                ["acked"]
            );
            assert_eq!(pop("e_mvcc", None, 1, true).len(), 1);
            assert_eq!(pop("e_mvcc", None, 1, true).len(), 1);
        }
        assert_eq!(
            changed(),
            before,
            "rows updated and deleted by the message path"
        );
        assert_eq!(queue_row("e_mvcc")["depth"], 0);
        assert_eq!(depth("e_mvcc")["groups"].as_array().unwrap().len(), 2);
        // Left behind: every version, every message, every lease's history.
        assert!(rows_of("ephemeral_tallies", "e_mvcc") > 20);
        assert_eq!(rows_of("ephemeral_messages", "e_mvcc"), 41);
        // Each round: a delivery and a settlement of one lease, and a
        // delivery, a hand-back, a redelivery and a settlement of the other.
        assert_eq!(rows_of("ephemeral_leases", "e_mvcc"), 20 * 6);

        let report = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(report["ephemeral_compaction_deferred"], false, "{report}");
        assert!(
            report["ephemeral_compacted"].as_i64().unwrap() > 100,
            "{report}"
        );
        assert_eq!(rows_of("ephemeral_tallies", "e_mvcc"), 1);
        assert_eq!(rows_of("ephemeral_partition_states", "e_mvcc"), 1);
        assert_eq!(rows_of("ephemeral_cursors", "e_mvcc"), 2, "one per group");
        assert_eq!(rows_of("ephemeral_messages", "e_mvcc"), 0);
        assert_eq!(rows_of("ephemeral_leases", "e_mvcc"), 0);
        the_cycle_keeps_every_lease_still_held(&keep);
        // What the queue holds reads the same after.
        assert_eq!(queue_row("e_mvcc")["depth"], 0);
        push("e_mvcc", &[json!("last")]);
        assert_eq!(queue_row("e_mvcc")["depth"], 1);
        assert_eq!(depth("e_mvcc")["partitions"][0]["pending"], 1);
        let last = pop("e_mvcc", Some("g"), 10, false);
        assert_eq!(payloads(&last), [json!("last")]);
        // This transaction's deletions are not reclaimable while it is
        // open: the next pass waits, and the rows written since stay.
        let next = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(next["ephemeral_compaction_deferred"], true, "{next}");
        assert_eq!(next["ephemeral_compacted"], 0, "{next}");
        assert_eq!(rows_of("ephemeral_tallies", "e_mvcc"), 2);
        assert_eq!(
            ack("e_mvcc", Some("g"), json!([{"id": last[0]["id"]}])),
            ["acked"]
        );
    }

    /// Part of [`the_message_path_updates_and_deletes_no_row`] (a pass of
    /// the cycle runs once a transaction): a lease held across a pass is not
    /// touched by it; one settled, or below the tail, goes with its whole
    /// history.
    fn the_cycle_keeps_every_lease_still_held(got: &[Value]) {
        // The settled lease's two versions went; the others' histories stay.
        assert_eq!(rows_of("ephemeral_leases", "e_keep"), 3);
        assert_eq!(
            ack("e_keep", Some("g"), json!([{"id": got[0]["id"]}])),
            ["unknown"],
            "a settled lease stays settled"
        );
        let back = pop("e_keep", Some("g"), 3, false);
        assert_eq!(payloads(&back), [json!(2)]);
        assert_eq!(back[0]["attempts"], 2);
        let acks = json!([{"id": got[2]["id"]}, {"id": back[0]["id"]}]);
        assert_eq!(ack("e_keep", Some("g"), acks), ["acked", "acked"]);
        assert_eq!(depth("e_keep")["pending"], 0);
        assert!(pop("e_keep", Some("g"), 3, false).is_empty());
    }

    #[pg_test]
    fn reject_refuses_a_push_past_the_bounds_and_writes_nothing() {
        let a = configure("e_rej", json!({"maxLength": 2, "policy": "reject"}));
        assert_eq!(a["queue"], "e_rej");
        assert_eq!(a["durability"], "unlogged");
        assert_eq!(a["options"], json!({"maxLength": 2, "policy": "reject"}));
        assert!(a["updatedAt"].as_str().unwrap().ends_with('Z'));
        assert_eq!(push("e_rej", &[json!(1), json!(2)]), json!({"pushed": 2}));
        let full = r#"SELECT queen.ephemeral_push('{"queue":"e_rej","messages":[{"payload":3}]}')"#;
        assert_eq!(state_of(full), "53000");
        assert_eq!(depth("e_rej")["pending"], 2);
        assert_eq!(queue_row("e_rej")["drops"]["bounds"], 0);
        // A message larger than maxBytes fits under no policy.
        configure("e_rej2", json!({"maxBytes": 4, "policy": "dropOldest"}));
        let big = r#"SELECT queen.ephemeral_push(
            '{"queue":"e_rej2","messages":[{"payload":"long text"}]}')"#;
        assert_eq!(state_of(big), "53000");
    }

    #[pg_test]
    fn drop_oldest_makes_room_and_counts_the_drops() {
        configure("e_drop", json!({"maxLength": 2, "policy": "dropOldest"}));
        for i in 1..=3 {
            push("e_drop", &[json!(i)]);
        }
        assert_eq!(depth("e_drop")["pending"], 2);
        assert_eq!(queue_row("e_drop")["drops"]["bounds"], 1);
        let got = pop("e_drop", Some("g"), 10, true);
        assert_eq!(payloads(&got), vec![json!(2), json!(3)]);
        // By bytes: each payload `"xxxx"` is 6 bytes; 12 bytes hold two.
        configure("e_dropb", json!({"maxBytes": 12, "policy": "dropOldest"}));
        for s in ["aaaa", "bbbb", "cccc"] {
            push("e_dropb", &[json!(s)]);
        }
        let q = queue_row("e_dropb");
        assert_eq!(q["bytes"], 12);
        assert_eq!(q["drops"]["bounds"], 1);
        assert_eq!(q["options"]["policy"], "dropOldest");
        assert_eq!(q["options"]["maxBytes"], 12);
        // A push larger than the bounds keeps its newest messages.
        configure("e_dropn", json!({"maxLength": 2, "policy": "dropOldest"}));
        push("e_dropn", &[json!(0)]);
        assert_eq!(
            push("e_dropn", &[json!(1), json!(2), json!(3)]),
            json!({"pushed": 3})
        );
        assert_eq!(queue_row("e_dropn")["drops"]["bounds"], 2);
        let got = pop("e_dropn", None, 10, true);
        assert_eq!(payloads(&got), vec![json!(2), json!(3)]);
    }

    #[pg_test]
    fn expired_messages_are_dropped_and_counted() {
        configure("e_ttl", json!({"ttlSeconds": 1}));
        push("e_ttl", &[json!("old")]);
        Spi::run("SELECT pg_sleep(1.2)").unwrap();
        push("e_ttl", &[json!("new")]);
        let got = pop("e_ttl", None, 10, false);
        assert_eq!(payloads(&got), vec![json!("new")]);
        assert_eq!(queue_row("e_ttl")["drops"]["ttl"], 1);
    }

    #[pg_test]
    fn failures_redeliver_until_the_retry_limit_then_drop() {
        configure("e_retry", json!({"retryLimit": 2}));
        push("e_retry", &[json!("m")]);
        let a = pop("e_retry", Some("g"), 1, false);
        assert_eq!(a[0]["attempts"], 1);
        let id = a[0]["id"].clone();
        assert_eq!(
            ack(
                "e_retry",
                Some("g"),
                json!([{"id": id, "status": "failed"}])
            ),
            ["redelivered"]
        );
        let b = pop("e_retry", Some("g"), 1, false);
        assert_eq!(b[0]["attempts"], 2);
        assert_eq!(b[0]["id"], id, "a redelivery keeps the id");
        assert_eq!(
            ack("e_retry", Some("g"), json!([{"id": id, "status": "retry"}])),
            ["acked"]
        );
        assert!(pop("e_retry", Some("g"), 10, false).is_empty());
        assert_eq!(queue_row("e_retry")["drops"]["retry"], 1);
        assert_eq!(
            depth("e_retry")["pending"],
            0,
            "the dropped message is removed"
        );
    }

    #[pg_test]
    fn every_group_has_its_own_cursor_and_a_group_competes_with_itself() {
        // Both groups are seen before the push: each is owed everything.
        assert!(pop("e_grp", Some("a"), 10, true).is_empty());
        assert!(pop("e_grp", Some("b"), 10, true).is_empty());
        push("e_grp", &[json!(1), json!(2)]);
        assert_eq!(payloads(&pop("e_grp", Some("a"), 10, true)).len(), 2);
        assert_eq!(depth("e_grp")["pending"], 2, "b has not read them yet");
        let d = call("SELECT queen.ephemeral_depth('e_grp', 'b')", Vec::new());
        assert_eq!(d["pending"], 2);
        assert_eq!(d["group"], "b");
        assert_eq!(payloads(&pop("e_grp", Some("b"), 10, true)).len(), 2);
        assert_eq!(
            depth("e_grp")["pending"],
            0,
            "removed once every group passed"
        );
        // Competing consumers of one group take disjoint messages.
        push("e_comp", &[json!(1), json!(2)]);
        let x = pop("e_comp", Some("w"), 1, false);
        let y = pop("e_comp", Some("w"), 1, false);
        assert_ne!(x[0]["id"], y[0]["id"]);
        assert!(pop("e_comp", Some("w"), 10, false).is_empty());
        let ids = json!([{"id": x[0]["id"]}, {"id": y[0]["id"]}]);
        assert_eq!(ack("e_comp", Some("w"), ids), ["acked", "acked"]);
        assert_eq!(depth("e_comp")["pending"], 0);
    }

    #[pg_test]
    fn auto_ack_commits_on_delivery() {
        push("e_auto", &[json!(1)]);
        let got = pop("e_auto", None, 10, true);
        assert_eq!(got.len(), 1);
        assert_eq!(n("SELECT count(*) FROM queen.ephemeral_leases"), 0);
        assert_eq!(depth("e_auto")["pending"], 0);
        assert_eq!(
            ack("e_auto", None, json!([{"id": got[0]["id"]}])),
            ["unknown"]
        );
    }

    #[pg_test]
    fn a_lease_that_runs_out_redelivers() {
        configure("e_lease", json!({"leaseSeconds": 1}));
        push("e_lease", &[json!(1)]);
        let first = pop("e_lease", None, 1, false);
        assert!(pop("e_lease", None, 1, false).is_empty(), "leased");
        Spi::run("SELECT pg_sleep(1.2)").unwrap();
        let again = pop("e_lease", None, 1, false);
        assert_eq!(again[0]["id"], first[0]["id"]);
        assert_eq!(again[0]["attempts"], 2);
    }

    #[pg_test]
    fn reset_drops_the_contents_and_makes_old_ids_stale() {
        configure("e_reset", json!({"maxLength": 10}));
        push("e_reset", &[json!(1), json!(2), json!(3)]);
        let old = pop("e_reset", None, 1, false);
        let r = call("SELECT queen.ephemeral_reset('e_reset')", Vec::new());
        assert_eq!(r["dropped"], 3);
        assert_eq!(
            ack("e_reset", None, json!([{"id": old[0]["id"]}])),
            ["stale"]
        );
        assert_eq!(depth("e_reset")["pending"], 0);
        assert_eq!(
            depth("e_reset")["tier"],
            "declared",
            "the declaration stays"
        );
        push("e_reset", &[json!(4)]);
        let new = pop("e_reset", None, 1, false);
        assert_eq!(new[0]["payload"], 4);
        assert_ne!(new[0]["id"], old[0]["id"]);
        let unknown = call("SELECT queen.ephemeral_reset('e_none')", Vec::new());
        assert_eq!(unknown["dropped"], 0);
    }

    #[pg_test]
    fn delete_removes_contents_and_declaration() {
        configure("e_del", json!({}));
        push("e_del", &[json!(1)]);
        let d = call("SELECT queen.ephemeral_delete('e_del')", Vec::new());
        assert_eq!(
            d,
            json!({"queue": "e_del", "deleted": true, "declared": true})
        );
        assert_eq!(state_of("SELECT queen.ephemeral_depth('e_del')"), "42704");
        let again = call("SELECT queen.ephemeral_delete('e_del')", Vec::new());
        assert_eq!(again["deleted"], false);
        push("e_imp", &[json!(1)]);
        assert_eq!(queue_row("e_imp")["tier"], "implicit");
        let imp = call("SELECT queen.ephemeral_delete('e_imp')", Vec::new());
        assert_eq!(
            imp,
            json!({"queue": "e_imp", "deleted": true, "declared": false})
        );
    }

    /// The contents are in unlogged tables; the declarations are logged.
    #[pg_test]
    fn the_contents_are_unlogged_and_the_declarations_are_not() {
        let unlogged = n("SELECT count(*) FROM pg_class
             WHERE relnamespace = 'queen'::regnamespace AND relkind = 'r'
               AND relname LIKE 'ephemeral%' AND relpersistence = 'u'");
        assert_eq!(unlogged, 10);
        let logged = n("SELECT count(*) FROM pg_class
             WHERE oid = 'queen.ephemeral_queues'::regclass AND relpersistence = 'p'");
        assert_eq!(logged, 1);
    }

    /// What crash recovery does to the unlogged tables, done by hand: the
    /// declared queue stays, empty, and an id from before answers stale.
    #[pg_test]
    fn ids_from_before_a_crash_are_stale() {
        configure("e_crash", json!({"maxLength": 5}));
        push("e_crash", &[json!(1)]);
        let old = pop("e_crash", None, 1, false);
        Spi::run(
            "TRUNCATE queen.ephemeral_state, queen.ephemeral_tallies,
                      queen.ephemeral_partitions, queen.ephemeral_partition_states,
                      queen.ephemeral_messages, queen.ephemeral_groups,
                      queen.ephemeral_cursors, queen.ephemeral_leases,
                      queen.ephemeral_retired",
        )
        .unwrap();
        let q = queue_row("e_crash");
        assert_eq!(q["tier"], "declared");
        assert_eq!(q["depth"], 0);
        assert_eq!(q["options"]["maxLength"], 5);
        assert_eq!(
            ack("e_crash", None, json!([{"id": old[0]["id"]}])),
            ["stale"]
        );
        push("e_crash", &[json!(2)]);
        let new = pop("e_crash", None, 1, false);
        assert_eq!(new[0]["payload"], 2);
        assert_ne!(new[0]["id"], old[0]["id"]);
        assert_eq!(
            ack("e_crash", None, json!([{"id": new[0]["id"]}])),
            ["acked"]
        );
        assert_eq!(
            ack("e_crash", None, json!([{"id": "nonsense"}])),
            ["unknown"]
        );
    }

    #[pg_test]
    fn the_rows_of_a_reset_go_in_bounded_steps() {
        Spi::run("SET LOCAL queen.ephemeral_cleanup_batch = 2").unwrap();
        push(
            "e_steps",
            &[json!(1), json!(2), json!(3), json!(4), json!(5)],
        );
        call("SELECT queen.ephemeral_reset('e_steps')", Vec::new());
        let left = || {
            n("SELECT count(*) FROM queen.ephemeral_messages
                WHERE incarnation NOT IN (SELECT incarnation FROM queen.ephemeral_state)")
        };
        assert_eq!(left(), 3, "the reset's own step removed two");
        push("e_other", &[json!(1)]);
        assert_eq!(left(), 1, "one step of another queue's push: two removed");
        pop("e_other", None, 1, true);
        assert_eq!(left(), 0);
        pop("e_other", None, 1, true);
        assert_eq!(n("SELECT count(*) FROM queen.ephemeral_retired"), 0);
    }

    #[pg_test]
    fn bad_input_is_refused_with_its_sqlstate() {
        for (sql, state) in [
            (
                r#"SELECT queen.ephemeral_configure('q', '{"ttlSecond": 1}')"#,
                "22023",
            ),
            (
                r#"SELECT queen.ephemeral_configure('q', '{"maxLength": -1}')"#,
                "22023",
            ),
            (
                r#"SELECT queen.ephemeral_configure('q', '{"maxLength": 1.5}')"#,
                "22023",
            ),
            (
                r#"SELECT queen.ephemeral_configure('q', '{"policy": "drop"}')"#,
                "22023",
            ),
            (
                r#"SELECT queen.ephemeral_configure('q', '{"windowBuffer": {"n": 1}}')"#,
                "22023",
            ),
            (r#"SELECT queen.ephemeral_configure('q', '[]')"#, "22023"),
            ("SELECT queen.ephemeral_configure('', NULL)", "22023"),
            (
                r#"SELECT queen.ephemeral_push('{"messages": []}')"#,
                "22023",
            ),
            (
                r#"SELECT queen.ephemeral_push('{"queue": "q", "messages": [{"data": 1}]}')"#,
                "22023",
            ),
            (r#"SELECT queen.ephemeral_push('{"queue": "q"}')"#, "22023"),
            ("SELECT queen.ephemeral_pop('q', NULL, NULL, 0)", "22023"),
            (
                r#"SELECT queen.ephemeral_ack(
                    '{"queue": "q", "acks": [{"id": "x", "status": "meh"}]}')"#,
                "22023",
            ),
            ("SELECT queen.ephemeral_depth('never_there')", "42704"),
        ] {
            assert_eq!(state_of(sql), state, "{sql}");
        }
        assert_eq!(
            n("SELECT count(*) FROM queen.ephemeral_queues"),
            0,
            "nothing written"
        );
        let many = format!(
            r#"SELECT queen.ephemeral_push('{{"queue": "q", "messages": [{}]}}')"#,
            vec![r#"{"payload": 1}"#; 10_001].join(",")
        );
        assert_eq!(state_of(&many), "22023");
        assert_eq!(push("q", &[]), json!({"pushed": 0}));
    }

    #[pg_test]
    fn the_switch_refuses_writes_and_keeps_the_reads() {
        push("e_sw", &[json!(1)]);
        let off = call(
            r#"SELECT queen.system_switches('ephemeral', '{"enabled": false}')"#,
            Vec::new(),
        );
        assert_eq!(off["ephemeralEnabled"], false);
        assert_eq!(state_of("SELECT queen.ephemeral_pop('e_sw')"), "57000");
        assert_eq!(
            state_of(
                r#"SELECT queen.ephemeral_push('{"queue":"e_sw","messages":[{"payload":1}]}')"#
            ),
            "57000"
        );
        assert_eq!(state_of("SELECT queen.ephemeral_reset('e_sw')"), "57000");
        assert_eq!(depth("e_sw")["pending"], 1, "the reads answer");
        let on = call(
            r#"SELECT queen.system_switches('ephemeral', '{"enabled": true}')"#,
            Vec::new(),
        );
        assert_eq!(on["ephemeralEnabled"], true);
        let status = call("SELECT queen.system_switches('ephemeral')", Vec::new());
        assert_eq!(status["queues"], 1);
        assert!(status["epoch"].as_i64().is_some());
        assert_eq!(pop("e_sw", None, 1, true).len(), 1);
    }

    /// A queue-wide pop visits at most `queen.ephemeral_pop_max_partitions`
    /// partitions by name; the next one starts past the last it visited,
    /// so the partitions past the first ones are served too.
    #[pg_test]
    fn queue_wide_pops_go_round_every_partition() {
        Spi::run("SET queen.ephemeral_pop_max_partitions = 4").unwrap();
        for k in 0..6 {
            call(
                "SELECT queen.ephemeral_push($1)",
                vec![JsonB(json!({"queue": "round", "partition": format!("p{k}"),
                                   "messages": [{"payload": k}]}))
                .into()],
            );
        }
        let first = pop("round", None, 10, true);
        assert_eq!(first.len(), 4, "{first:?}");
        let second = pop("round", None, 10, true);
        let mut parts: Vec<&str> = second
            .iter()
            .map(|m| m["partition"].as_str().unwrap())
            .collect();
        parts.sort_unstable();
        assert_eq!(parts, ["p4", "p5"], "{second:?}");
    }

    /// Moves the notes of `queue`'s group `grp` ('' for the queue itself)
    /// `by` into the past, as if no call had named them since.
    fn age(queue: &str, grp: &str, by: &str) {
        Spi::run_with_args(
            "UPDATE queen.ephemeral_seen n SET seen_at = n.seen_at - $3::interval
               FROM queen.ephemeral_state s
              WHERE s.incarnation = n.incarnation AND s.queue = $1 AND n.grp = $2",
            &[queue.into(), grp.into(), by.into()],
        )
        .unwrap();
    }

    fn groups_of(queue: &str) -> Vec<String> {
        let mut g: Vec<String> = depth(queue)["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["group"].as_str().unwrap().to_owned())
            .collect();
        g.sort();
        g
    }

    /// A group no pop has named for `queen.ephemeral_group_idle_seconds` no
    /// longer holds back what the others read: a queue it pinned full takes
    /// pushes again, and the group, back, resumes past what went.
    #[pg_test]
    fn an_abandoned_group_is_forgotten_and_no_longer_pins_the_queue() {
        configure("e_gone", json!({"maxLength": 3, "policy": "reject"}));
        // Both groups have read the partition.
        push("e_gone", &[json!("a"), json!("b")]);
        assert_eq!(
            payloads(&pop("e_gone", Some("gone"), 1, true)),
            [json!("a")]
        );
        assert_eq!(
            payloads(&pop("e_gone", Some("live"), 1, true)),
            [json!("b")]
        );
        assert_eq!(
            payloads(&pop("e_gone", Some("gone"), 1, true)),
            [json!("b")]
        );
        assert_eq!(queue_row("e_gone")["depth"], 0);
        push("e_gone", &[json!(1), json!(2), json!(3)]);
        assert_eq!(pop("e_gone", Some("live"), 10, true).len(), 3);
        let full =
            r#"SELECT queen.ephemeral_push('{"queue":"e_gone","messages":[{"payload":4}]}')"#;
        assert_eq!(
            state_of(full),
            "53000",
            "the group that left pins all three"
        );
        age("e_gone", "gone", "2 hours");
        // Off: nothing is forgotten.
        Spi::run("SET LOCAL queen.ephemeral_group_idle_seconds = 0").unwrap();
        let off = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(off["ephemeral_groups_forgotten"], 0, "{off}");
        assert_eq!(groups_of("e_gone"), ["gone", "live"]);
        Spi::run("SET LOCAL queen.ephemeral_group_idle_seconds = 3600").unwrap();
        let report = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(report["ephemeral_groups_forgotten"], 1, "{report}");
        assert_eq!(
            groups_of("e_gone"),
            ["live"],
            "the group named within the hour stays"
        );
        // The next pop of the group that stayed removes what it read.
        assert!(pop("e_gone", Some("live"), 1, true).is_empty());
        assert_eq!(queue_row("e_gone")["depth"], 0);
        assert_eq!(push("e_gone", &[json!(4)]), json!({"pushed": 1}));
        // Back, the group resumes where it was, less what went meanwhile.
        let back = pop("e_gone", Some("gone"), 10, true);
        assert_eq!(payloads(&back), [json!(4)]);
        let its = depth("e_gone")["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["group"] == "gone")
            .cloned()
            .unwrap();
        assert_eq!(its["skipped"], 3, "{its}");
    }

    /// An implicit queue that holds nothing and that no push or pop has named
    /// for `queen.ephemeral_implicit_idle_seconds` is removed with its rows; a
    /// declared one, one that holds messages and one named since stay.
    #[pg_test]
    fn an_empty_implicit_queue_unused_for_the_idle_period_is_removed() {
        for q in ["e_imp_empty", "e_imp_held", "e_imp_recent", "e_decl"] {
            if q == "e_decl" {
                configure(q, json!({}));
            }
            push(q, &[json!(q)]);
            if q != "e_imp_held" {
                assert_eq!(pop(q, None, 1, true).len(), 1);
            }
        }
        let inc = n("SELECT incarnation FROM queen.ephemeral_state WHERE queue = 'e_imp_empty'");
        for q in ["e_imp_empty", "e_imp_held", "e_decl"] {
            age(q, "", "1 day");
            age(q, "__QUEUE_MODE__", "1 hour");
        }
        let report = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(report["ephemeral_queues_removed"], 1, "{report}");
        assert_eq!(queue_row("e_imp_empty"), Value::Null);
        assert_eq!(
            state_of("SELECT queen.ephemeral_depth('e_imp_empty')"),
            "42704"
        );
        // Its rows went with it, in the cycle's cleanup steps.
        for t in [
            "ephemeral_tallies",
            "ephemeral_partitions",
            "ephemeral_partition_states",
            "ephemeral_cursors",
            "ephemeral_groups",
            "ephemeral_seen",
            "ephemeral_retired",
        ] {
            assert_eq!(
                n(&format!(
                    "SELECT count(*) FROM queen.{t} WHERE incarnation = {inc}"
                )),
                0,
                "{t}"
            );
        }
        assert_eq!(queue_row("e_imp_held")["depth"], 1);
        assert_eq!(queue_row("e_imp_recent")["depth"], 0);
        assert_eq!(queue_row("e_decl")["tier"], "declared");
        // The queue that holds a message is looked at again an idle period
        // later; the declared one has no note of its own.
        assert_eq!(
            n(
                "SELECT count(*) FROM queen.ephemeral_seen n JOIN queen.ephemeral_state s
               USING (incarnation) WHERE s.queue = 'e_imp_held' AND n.grp = ''
                 AND n.seen_at > clock_timestamp() - interval '1 minute'"
            ),
            1
        );
        assert_eq!(
            n(
                "SELECT count(*) FROM queen.ephemeral_seen n JOIN queen.ephemeral_state s
               USING (incarnation) WHERE s.queue = 'e_decl' AND n.grp = ''"
            ),
            0
        );
        // Named again, the removed queue is live afresh: a new incarnation.
        push("e_imp_empty", &[json!("again")]);
        assert!(
            n("SELECT incarnation FROM queen.ephemeral_state WHERE queue = 'e_imp_empty'") > inc
        );
        assert_eq!(
            payloads(&pop("e_imp_empty", None, 5, true)),
            [json!("again")]
        );
    }
}
