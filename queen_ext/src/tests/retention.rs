//! Retention tests inside PostgreSQL: every rule and edge of the steps, the
//! work list, the lease row, dead-letter carry-forward and one whole cycle.
//! Each test runs in one transaction, so "old" data is made old by moving
//! created_at back.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::tests::support::{ack, ack_all, datas, js, n, push};

    fn jb(sql: &str) -> Value {
        Spi::get_one::<JsonB>(sql)
            .unwrap()
            .map(|JsonB(v)| v)
            .unwrap_or(Value::Null)
    }

    /// `segments` pushes of `per` messages each into queue/partition, all
    /// made `age` old. Answers the partition id.
    fn backlog(queue: &str, partition: &str, segments: usize, per: usize, age: &str) -> i64 {
        for _ in 0..segments {
            let items: Vec<Value> = (0..per)
                .map(|i| json!({"queue": queue, "partition": partition, "payload": i}))
                .collect();
            Spi::get_one_with_args::<Json>(
                "SELECT queen.push($1)",
                &[JsonB(Value::Array(items)).into()],
            )
            .unwrap();
        }
        let pid = Spi::get_one_with_args::<i64>(
            "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 AND p.name = $2",
            &[queue.into(), partition.into()],
        )
        .unwrap()
        .unwrap();
        age_partition(pid, age);
        pid
    }

    fn age_partition(pid: i64, age: &str) {
        Spi::run_with_args(
            &format!(
                "UPDATE queen.log_segments SET created_at = created_at - interval '{age}' WHERE partition_id = $1;
                 UPDATE queen.log_txns SET created_at = created_at - interval '{age}' WHERE partition_id = $1;
                 UPDATE queen.log_partitions SET oldest_live_at = oldest_live_at - interval '{age}',
                        oldest_txn_at = oldest_txn_at - interval '{age}', last_write_at = last_write_at - interval '{age}',
                        created_at = created_at - interval '{age}' WHERE id = $1"
            ),
            &[pid.into()],
        )
        .unwrap();
    }

    fn step(pid: i64, all: &str, completed: &str, max_rows: i32) -> Value {
        jb(&format!(
            "SELECT queen_internal.log_retention_step_v1({pid}, {all}, {completed}, {max_rows})"
        ))
    }

    fn segments(pid: i64) -> i64 {
        n(&format!(
            "SELECT count(*) FROM queen.log_segments WHERE partition_id = {pid}"
        ))
    }

    fn pop_ack(queue: &str, group: Option<&str>, batch: i32) {
        pop_ack_in(queue, None, group, batch, "{}");
    }

    #[pg_test]
    fn rule1_deletes_old_segments_regardless_of_consumption() {
        let pid = backlog("r1", "p", 5, 3, "2 hours");
        let r = step(pid, "now() - interval '1 hour'", "NULL", 100);
        assert_eq!(
            r,
            json!({"deleted": 5, "messages": 15, "new_log_start": 15, "done": true})
        );
        assert_eq!(segments(pid), 0);
        assert_eq!(
            n(&format!(
                "SELECT log_start FROM queen.log_partitions WHERE id = {pid}"
            )),
            15
        );
        assert_eq!(n(&format!("SELECT count(*) FROM queen.log_partitions WHERE id = {pid} AND oldest_live_at IS NULL")), 1);
        assert_eq!(n("SELECT messages_deleted FROM queen.retention_history WHERE retention_type = 'retention'"), 15);
        // Nothing left: done, no second audit row.
        let again = step(pid, "now() - interval '1 hour'", "NULL", 100);
        assert_eq!(again["deleted"], 0);
        assert_eq!(again["done"], true);
        assert_eq!(n("SELECT count(*) FROM queen.retention_history"), 1);
    }

    #[pg_test]
    fn rule1_keeps_fresh_segments_and_the_watermark_lands_on_the_first_kept() {
        let pid = backlog("r1b", "p", 3, 2, "2 hours");
        backlog("r1b", "p", 2, 2, "0 seconds");
        let r = step(pid, "now() - interval '1 hour'", "NULL", 100);
        assert_eq!(r["deleted"], 3);
        assert_eq!(r["new_log_start"], 6);
        assert_eq!(segments(pid), 2);
        assert_eq!(
            n(&format!("SELECT count(*) FROM queen.log_partitions p WHERE id = {pid} AND oldest_live_at = (SELECT created_at FROM queen.log_segments WHERE partition_id = {pid} AND base_offset = 6)")),
            1
        );
    }

    #[pg_test]
    fn rule2_without_consumers_deletes_nothing() {
        let pid = backlog("r2", "p", 3, 2, "2 hours");
        let r = step(pid, "NULL", "now() - interval '1 hour'", 100);
        assert_eq!(r["deleted"], 0);
        assert_eq!(segments(pid), 3);
    }

    #[pg_test]
    fn rule2_keeps_the_segment_a_mid_segment_cursor_points_into() {
        let pid = backlog("r2m", "p", 3, 4, "2 hours");
        // Consume 6 messages: the cursor sits inside the second segment (4..7).
        pop_ack("r2m", Some("g"), 6);
        let r = step(pid, "NULL", "now() - interval '1 hour'", 100);
        assert_eq!(r["deleted"], 1, "{r}");
        assert_eq!(r["new_log_start"], 4);
        assert_eq!(segments(pid), 2);
        assert_eq!(n("SELECT count(*) FROM queen.retention_history WHERE retention_type = 'completed_retention'"), 1);
    }

    #[pg_test]
    fn a_stalled_group_pins_the_partition_for_everyone() {
        Spi::get_one::<Json>("SELECT queen.configure('stall', '{\"retentionEnabled\": true, \"completedRetentionSeconds\": 60}')").unwrap();
        let pid = backlog("stall", "p", 3, 2, "2 hours");
        pop_ack("stall", Some("fast"), 6);
        pop_ack("stall", Some("slow"), 1);
        // The slow group's lease is still open; its cursor is at offset 0.
        let r = step(pid, "NULL", "now() - interval '1 hour'", 100);
        assert_eq!(r["deleted"], 0);
        let explain = js("SELECT queen.retention_explain('stall')");
        let pins = explain["partitions"][0]["pinnedBy"].to_string();
        assert!(
            pins.contains("slow") && pins.contains("caps rule 2"),
            "{explain}"
        );
        assert_eq!(explain["partitions"][0]["nextCycleDeletes"]["segments"], 0);
    }

    /// Pops up to `batch` of `queue` (of its partition `partition`, when
    /// given) for `group` with `options`, and acks them; answers how many.
    fn pop_ack_in(
        queue: &str,
        partition: Option<&str>,
        group: Option<&str>,
        batch: i32,
        options: &str,
    ) -> usize {
        let popped = Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, $2, $3, $4, $5::jsonb)",
            &[
                queue.into(),
                partition.into(),
                group.into(),
                batch.into(),
                options.into(),
            ],
        )
        .unwrap()
        .unwrap()
        .0;
        let acks: Vec<Value> = popped["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "consumerGroup": group}))
            .collect();
        let n = acks.len();
        if n > 0 {
            Spi::get_one_with_args::<Json>(
                "SELECT queen.ack($1)",
                &[JsonB(Value::Array(acks)).into()],
            )
            .unwrap();
        }
        n
    }

    /// [`pop_ack_in`] of one partition for one group.
    fn pop_ack_partition(
        queue: &str,
        partition: &str,
        group: &str,
        batch: i32,
        options: &str,
    ) -> usize {
        pop_ack_in(queue, Some(partition), Some(group), batch, options)
    }

    /// A consumer group registered on the queue that has not read a
    /// partition yet (no cursor there) has consumed nothing of it: rule 2
    /// keeps that partition's messages for it, as far back as its
    /// subscription reaches; a group subscribed to new messages only does
    /// not hold what came before it.
    #[pg_test]
    fn rule2_keeps_a_partition_for_a_group_that_has_not_read_it_yet() {
        Spi::get_one::<Json>(
            "SELECT queen.configure('unread', '{\"retentionEnabled\": true, \"completedRetentionSeconds\": 60}')",
        )
        .unwrap();
        let a = backlog("unread", "a", 2, 2, "2 hours");
        let b = backlog("unread", "b", 2, 2, "2 hours");
        for p in ["a", "b"] {
            assert_eq!(pop_ack_partition("unread", p, "fast", 100, "{}"), 4);
        }
        // "late" (subscribed to everything) reads partition a only.
        assert_eq!(pop_ack_partition("unread", "a", "late", 100, "{}"), 4);
        let completed = "now() - interval '1 hour'";
        let r = step(b, "NULL", completed, 100);
        assert_eq!(r["deleted"], 0, "late has not read b: {r}");
        assert_eq!(segments(b), 2);
        let r = step(a, "NULL", completed, 100);
        assert_eq!(r["deleted"], 2, "every group read a: {r}");
        // "late" comes to b and finds all of it.
        assert_eq!(pop_ack_partition("unread", "b", "late", 100, "{}"), 4);
        // A group subscribed to new messages, registered after b's were
        // written, holds none of them back once fast and late are done.
        pop_ack_partition(
            "unread",
            "a",
            "recent",
            100,
            r#"{"subscriptionMode": "new"}"#,
        );
        let r = step(b, "NULL", completed, 100);
        assert_eq!(r["deleted"], 2, "{r}");
    }

    #[pg_test]
    fn a_drain_is_clipped_to_the_batch_and_resumes_from_the_watermark() {
        let pid = backlog("clip", "p", 7, 1, "2 hours");
        let first = step(pid, "now() - interval '1 hour'", "NULL", 3);
        assert_eq!(first["deleted"], 3);
        assert_eq!(first["done"], false);
        let second = step(pid, "now() - interval '1 hour'", "NULL", 3);
        assert_eq!(second["deleted"], 3);
        assert_eq!(second["new_log_start"], 6);
        let third = step(pid, "now() - interval '1 hour'", "NULL", 3);
        assert_eq!(third["deleted"], 1);
        assert_eq!(third["done"], true);
        assert_eq!(segments(pid), 0);
        assert_eq!(n("SELECT count(*) FROM queen.retention_history"), 3);
    }

    #[pg_test]
    fn max_wait_evicts_a_leased_batch_and_the_cursor_skips_the_gap() {
        let pid = backlog("mw", "p", 2, 2, "2 hours");
        backlog("mw", "p", 1, 2, "0 seconds");
        let leased = Spi::get_one::<Json>("SELECT queen.pop('mw', NULL, NULL, 2, '{}')")
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(leased["messages"].as_array().unwrap().len(), 2);
        let r = jb(&format!("SELECT queen_internal.log_evict_max_wait_step_v1({pid}, now() - interval '1 hour', 100)"));
        assert_eq!(r["deleted"], 2);
        assert_eq!(n("SELECT count(*) FROM queen.retention_history WHERE retention_type = 'max_wait_time_eviction'"), 1);
        assert_eq!(
            n("SELECT count(*) FROM queen.log_dlq"),
            0,
            "nothing is dead-lettered"
        );
        Spi::run(
            "UPDATE queen.log_cursor_states SET lease_expires_at = now() - interval '1 second'",
        )
        .unwrap();
        let after = Spi::get_one::<Json>("SELECT queen.pop('mw', NULL, NULL, 10, '{}')")
            .unwrap()
            .unwrap()
            .0;
        let offsets: Vec<i64> = after["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["offset"].as_i64().unwrap())
            .collect();
        assert_eq!(offsets, vec![4, 5]);
    }

    #[pg_test]
    fn txns_purge_moves_its_own_watermark() {
        let pid = backlog("tx", "p", 3, 2, "2 hours");
        let r = jb(&format!(
            "SELECT queen_internal.log_txns_purge_step_v1({pid}, now() - interval '1 hour', 2)"
        ));
        assert_eq!(r["deleted"], 2);
        assert_eq!(r["new_txns_start"], 4);
        assert_eq!(r["done"], false);
        let r = jb(&format!(
            "SELECT queen_internal.log_txns_purge_step_v1({pid}, now() - interval '1 hour', 2)"
        ));
        assert_eq!(r["deleted"], 1);
        assert_eq!(n(&format!("SELECT count(*) FROM queen.log_partitions WHERE id = {pid} AND txns_start = 6 AND oldest_txn_at IS NULL")), 1);
        // Segments are untouched by the sidecar purge.
        assert_eq!(segments(pid), 3);
    }

    #[pg_test]
    fn a_backlog_older_than_the_sidecar_window_is_popped_and_acked() {
        // Three segments of two messages, two hours old: the sidecar purge
        // (its window is an hour here) takes every row of them.
        let pid = backlog("old", "p", 3, 2, "2 hours");
        jb(&format!(
            "SELECT queen_internal.log_txns_purge_step_v1({pid}, now() - interval '1 hour', 100)"
        ));
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_txns WHERE partition_id = {pid}"
            )),
            0
        );
        // A lease over part of the backlog, then the rest.
        for (batch, payloads) in [(3, vec![0, 1, 0]), (10, vec![1, 0, 1])] {
            let popped = js(&format!(
                "SELECT queen.pop('old', 'p', NULL, {batch}, '{{}}')"
            ));
            assert_eq!(
                datas(&popped),
                payloads.into_iter().map(Value::from).collect::<Vec<_>>()
            );
            let answer = ack_all(&popped, "completed", None);
            for a in answer.as_array().unwrap() {
                assert_eq!(a["success"], true, "{a}");
            }
        }
        assert_eq!(
            n(&format!(
                "SELECT committed FROM queen.log_consumers WHERE partition_id = {pid}"
            )),
            5
        );
        let popped = js("SELECT queen.pop('old', 'p', NULL, 10, '{}')");
        assert_eq!(popped["messages"], json!([]));
        // An id the lease does not hold is still refused.
        push(json!([{"queue": "old", "partition": "p", "payload": 9}]));
        let popped = js("SELECT queen.pop('old', 'p', NULL, 10, '{}')");
        let m = &popped["messages"][0];
        let answer = ack(
            json!([{"transactionId": "never-pushed", "partitionId": m["partitionId"],
                                 "leaseId": m["leaseId"], "status": "completed"}]),
        );
        assert_eq!(answer[0]["success"], false, "{answer}");
    }

    #[pg_test]
    fn cleanup_deletes_only_dead_partitions_and_audits_them() {
        let dead = backlog("cl", "dead", 1, 1, "40 days");
        step(dead, "now()", "NULL", 100);
        let kept = backlog("cl", "has-dlq", 1, 2, "40 days");
        let p = Spi::get_one::<Json>("SELECT queen.pop('cl', 'has-dlq', NULL, 1, '{}')")
            .unwrap()
            .unwrap()
            .0;
        let m = &p["messages"][0];
        Spi::get_one_with_args::<Json>(
            "SELECT queen.ack($1)",
            &[JsonB(json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": "dlq"})).into()],
        )
        .unwrap();
        step(kept, "now()", "NULL", 100);
        let fresh = backlog("cl", "fresh", 1, 1, "0 seconds");
        step(fresh, "now() + interval '1 second'", "NULL", 100);
        let r = jb(
            "SELECT queen_internal.log_partition_cleanup_step_v1(now() - interval '30 days', 100)",
        );
        assert_eq!(r, json!({"deleted": 1, "done": true}));
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_partitions WHERE id = {dead}"
            )),
            0
        );
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_partitions WHERE id IN ({kept}, {fresh})"
            )),
            2
        );
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_txns WHERE partition_id = {dead}"
            )),
            0
        );
        assert_eq!(n(&format!("SELECT count(*) FROM queen.retention_history WHERE partition_id = {dead} AND retention_type = '__partition_deleted__' AND messages_deleted = 0")), 1);
        // The time series leaves partition events out.
        let series = js("SELECT queen.retention_timeseries(now() - interval '1 day', 'day')");
        assert!(!series.to_string().contains("__partition_deleted__"));
    }

    #[pg_test]
    fn dead_letters_survive_the_reclaim_of_their_segment() {
        let pid = backlog("dl", "p", 1, 3, "2 hours");
        let p = Spi::get_one::<Json>("SELECT queen.pop('dl', NULL, NULL, 1, '{}')")
            .unwrap()
            .unwrap()
            .0;
        let m = &p["messages"][0];
        Spi::get_one_with_args::<Json>(
            "SELECT queen.ack($1)",
            &[JsonB(json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": "dlq", "error": "bad"})).into()],
        )
        .unwrap();
        assert_eq!(
            n("SELECT count(*) FROM queen.log_dlq WHERE created_at IS NULL"),
            1,
            "written narrow"
        );
        step(pid, "now() - interval '1 hour'", "NULL", 100);
        assert_eq!(segments(pid), 0);
        let row = jb("SELECT to_jsonb(d) || jsonb_build_object('payload', convert_from(d.payload, 'UTF8')::jsonb) FROM queen.log_dlq d");
        assert_eq!(row["payload"], json!(0));
        assert_eq!(row["transaction_id"], m["transactionId"]);
        assert_eq!(row["message_id"], m["id"]);
        assert_eq!(row["error"], "bad");
        assert!(row["created_at"].is_string());
    }

    #[pg_test]
    fn the_work_list_holds_only_due_partitions() {
        Spi::get_one::<Json>("SELECT queen.configure('wl', '{\"retentionEnabled\": true, \"retentionSeconds\": 3600}')").unwrap();
        let old = backlog("wl", "old", 1, 1, "2 hours");
        let idle = backlog("wl", "young", 1, 1, "0 seconds");
        let other = backlog("off", "old", 1, 1, "2 hours");
        let list = crate::pg::spi::spi(|c| crate::maintenance::retention::work_list::build(c, 100));
        let p1: Vec<i64> = list.phases[0].iter().map(|(p, _)| *p).collect();
        assert_eq!(p1, vec![old]);
        assert!(!p1.contains(&idle) && !p1.contains(&other));
        // Sidecar rows past the 900 s floor are due in phase 2 for every queue.
        let p2: Vec<i64> = list.phases[1].iter().map(|(p, _)| *p).collect();
        assert!(p2.contains(&old) && p2.contains(&other) && !p2.contains(&idle));
        assert!(list.phases[2].is_empty());
    }

    #[pg_test]
    fn one_cycle_applies_every_phase() {
        Spi::get_one::<Json>("SELECT queen.configure('cy', '{\"retentionEnabled\": true, \"retentionSeconds\": 60}')").unwrap();
        Spi::get_one::<Json>("SELECT queen.configure('ev', '{\"maxWaitTimeSeconds\": 60}')")
            .unwrap();
        backlog("cy", "p", 4, 2, "2 hours");
        backlog("ev", "p", 2, 2, "2 hours");
        let report = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(report["segments_deleted"], 4, "{report}");
        assert_eq!(report["max_wait_evicted"], 4, "{report}");
        assert_eq!(report["txns_purged"], 6, "{report}");
        assert_eq!(n("SELECT count(*) FROM queen.log_segments"), 0);
    }

    /// Pops, acks, renewals and a seek delete no cursor state (each leaves
    /// the state it replaced behind, a live row a backward probe never
    /// reads); the cycle deletes those, leaving each cursor its newest, and
    /// defers its next pass while its last deletions are not reclaimable
    /// (here: this test's own transaction is still open).
    #[pg_test]
    fn the_message_path_deletes_no_cursor_state_and_the_cycle_compacts_them() {
        let states = || n("SELECT count(*) FROM queen.log_cursor_states");
        let deleted =
            || n("SELECT pg_stat_get_xact_tuples_deleted('queen.log_cursor_states'::regclass)");
        let touched =
            || n("SELECT pg_stat_get_xact_tuples_updated('queen.log_cursor_states'::regclass)");
        for i in 0..6 {
            push(json!([{"queue": "cs", "partition": "p", "payload": i}]));
        }
        let (deleted_before, updated_before) = (deleted(), touched());
        for _ in 0..3 {
            let popped = js("SELECT queen.pop('cs', 'p', 'g', 2, '{}')");
            let lease = popped["messages"][0]["leaseId"]
                .as_str()
                .unwrap()
                .to_string();
            let renewed = js(&format!("SELECT queen.renew_lease('{lease}', 60)"));
            assert_eq!(renewed["renewed"], 1, "{renewed}");
            let acked = ack_all(&popped, "completed", Some("g"));
            assert!(
                acked
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|a| a["success"] == true),
                "{acked}"
            );
        }
        let seek =
            js("SELECT queen.consumer_group_seek('g', 'cs', '{\"position\": \"beginning\"}')");
        assert_eq!(seek["success"], true, "{seek}");
        assert_eq!(
            deleted() - deleted_before,
            0,
            "states deleted by the message path"
        );
        assert_eq!(
            touched() - updated_before,
            0,
            "states updated by the message path"
        );
        // One state to begin with, then 3 x (lease, renewal, ack) and the seek.
        assert_eq!(states(), 11);

        let report = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(report["states_compacted"], 10, "{report}");
        assert_eq!(report["compaction_deferred"], false, "{report}");
        assert_eq!(states(), 1);
        // The seek put the cursor back: it reads the six messages again.
        let again = js("SELECT queen.pop('cs', 'p', 'g', 10, '{}')");
        assert_eq!(datas(&again), (0..6).map(|i| json!(i)).collect::<Vec<_>>());
        // This transaction's deletions are not reclaimable while it is open.
        let next = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(next["compaction_deferred"], true, "{next}");
        assert_eq!(next["states_compacted"], 0, "{next}");
        assert_eq!(states(), 2);
    }

    #[pg_test]
    fn a_cursor_capped_partition_backs_off() {
        Spi::get_one::<Json>("SELECT queen.configure('bo', '{\"retentionEnabled\": true, \"completedRetentionSeconds\": 60}')").unwrap();
        backlog("bo", "p", 2, 2, "2 hours");
        pop_ack("bo", Some("g"), 1); // cursor inside the first segment: nothing deletable
        let first = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(first["backed_off"], 0);
        assert_eq!(first["segments_deleted"], 0);
        let second = js("SELECT queen_internal.retention_run_cycle()");
        assert_eq!(second["backed_off"], 1, "{second}");
    }

    #[pg_test]
    fn the_lease_row_claims_fences_and_releases() {
        let claim = |holder: &str| {
            Spi::get_one::<i64>(&format!(
                "SELECT queen_internal.maintenance_claim_v1('retention', '{holder}', 60000)"
            ))
            .unwrap()
        };
        let t1 = claim("a").expect("due at install");
        assert_eq!(claim("b"), None, "held");
        // The holder dies: once its lease runs out another claims, with a new token.
        Spi::run("UPDATE queen.maintenance_leases SET lease_expires_at = now() - interval '1 second' WHERE task = 'retention'").unwrap();
        let t2 = claim("b").expect("expired lease");
        assert!(t2 > t1);
        // The dead holder's late release is a no-op.
        assert_eq!(
            Spi::get_one::<bool>(&format!(
                "SELECT queen_internal.maintenance_release_v1('retention', {t1}, 5000)"
            ))
            .unwrap(),
            Some(false)
        );
        let due_before = n("SELECT (extract(epoch FROM next_due_at) * 1000)::int8 FROM queen.maintenance_leases WHERE task = 'retention'");
        assert_eq!(
            Spi::get_one::<bool>(&format!(
                "SELECT queen_internal.maintenance_release_v1('retention', {t2}, 5000)"
            ))
            .unwrap(),
            Some(true)
        );
        let due_after = n("SELECT (extract(epoch FROM next_due_at) * 1000)::int8 FROM queen.maintenance_leases WHERE task = 'retention'");
        assert_eq!(due_after - due_before, 5000, "exactly one period");
        // A failed run leaves the task due; a disabled task is never claimed.
        Spi::run("UPDATE queen.maintenance_leases SET next_due_at = now() - interval '1 second' WHERE task = 'retention'").unwrap();
        let t3 = claim("c").unwrap();
        Spi::get_one::<bool>(&format!(
            "SELECT queen_internal.maintenance_release_v1('retention', {t3}, NULL)"
        ))
        .unwrap();
        Spi::run("UPDATE queen.maintenance_leases SET enabled = false WHERE task = 'retention'")
            .unwrap();
        assert_eq!(claim("d"), None);
        Spi::run("UPDATE queen.maintenance_leases SET enabled = true WHERE task = 'retention'")
            .unwrap();
        assert!(claim("d").is_some(), "still due after the failed run");
    }

    #[pg_test]
    fn the_watermark_walk_writes_only_drifted_rows() {
        let a = backlog("wm", "a", 1, 1, "0 seconds");
        let b = backlog("wm", "b", 1, 1, "0 seconds");
        Spi::run(&format!("UPDATE queen.log_partitions SET oldest_live_at = NULL, oldest_txn_at = NULL WHERE id = {a}")).unwrap();
        let r = jb("SELECT queen_internal.retention_watermark_walk_v1(0, 5000)");
        assert_eq!(r["fixed"], 1);
        assert_eq!(r["done"], true);
        assert_eq!(n(&format!("SELECT count(*) FROM queen.log_partitions WHERE id IN ({a}, {b}) AND oldest_live_at IS NOT NULL")), 2);
        assert_eq!(
            jb("SELECT queen_internal.retention_watermark_walk_v1(0, 5000)")["fixed"],
            0
        );
    }

    /// After any interleaving of push, pop, ack and steps: log_start is the
    /// first live segment's base, every offset below it is gone, and the two
    /// watermark columns say the age of what sits at the watermarks.
    #[pg_test]
    fn watermarks_hold_after_random_interleavings() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        Spi::get_one::<Json>("SELECT queen.configure('inv', '{\"retentionEnabled\": true, \"completedRetentionSeconds\": 60}')").unwrap();
        let pid = backlog("inv", "p", 1, 1, "0 seconds");
        for round in 0..300 {
            match rnd(6) {
                0 | 1 => {
                    let k = 1 + rnd(4) as usize;
                    let items: Vec<Value> = (0..k)
                        .map(|i| json!({"queue": "inv", "partition": "p", "payload": i}))
                        .collect();
                    Spi::get_one_with_args::<Json>(
                        "SELECT queen.push($1)",
                        &[JsonB(Value::Array(items)).into()],
                    )
                    .unwrap();
                    if rnd(2) == 0 {
                        age_partition(pid, "2 minutes");
                    }
                }
                2 => pop_ack("inv", Some(["a", "b"][rnd(2) as usize]), 1 + rnd(5) as i32),
                3 => {
                    step(
                        pid,
                        "NULL",
                        "now() - interval '1 minute'",
                        1 + rnd(3) as i32,
                    );
                }
                4 => {
                    step(
                        pid,
                        "now() - interval '1 minute'",
                        "NULL",
                        1 + rnd(3) as i32,
                    );
                }
                _ => {
                    jb(&format!("SELECT queen_internal.log_txns_purge_step_v1({pid}, now() - interval '1 minute', {})", 1 + rnd(3)));
                }
            }
            let broken = n(&format!(
                "SELECT count(*) FROM queen.log_partitions p WHERE p.id = {pid} AND (
                     EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id AND s.base_offset < p.log_start)
                  OR p.log_start <> COALESCE((SELECT min(base_offset) FROM queen.log_segments s WHERE s.partition_id = p.id), p.log_start)
                  OR p.oldest_live_at IS DISTINCT FROM (SELECT created_at FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY base_offset LIMIT 1)
                  OR EXISTS (SELECT 1 FROM queen.log_txns t WHERE t.partition_id = p.id AND t.base_offset < p.txns_start)
                  OR p.oldest_txn_at IS DISTINCT FROM (SELECT created_at FROM queen.log_txns t WHERE t.partition_id = p.id ORDER BY base_offset LIMIT 1)
                  OR p.log_start > COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id
                                             ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) + 1)"
            ));
            assert_eq!(broken, 0, "invariant broken after round {round}");
        }
    }

    #[pg_test]
    fn a_step_failing_on_one_partition_fails_that_partition_alone() {
        Spi::get_one::<Json>("SELECT queen.configure('iso', '{\"retentionEnabled\": true, \"retentionSeconds\": 60}')").unwrap();
        let bad = backlog("iso", "bad", 2, 2, "2 hours");
        let good = backlog("iso", "good", 2, 2, "2 hours");
        // The step writes its audit row last: failing that insert fails the
        // bad partition's step after its delete, which it undoes.
        Spi::run(&format!(
            "CREATE FUNCTION public.iso_sabotage() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF NEW.partition_id = {bad} THEN RAISE EXCEPTION 'sabotaged step' USING ERRCODE = 'XX000'; END IF; RETURN NEW; END $$;
             CREATE TRIGGER iso_sabotage BEFORE INSERT ON queen.retention_history
                 FOR EACH ROW EXECUTE FUNCTION public.iso_sabotage();"
        ))
        .unwrap();
        let cycle = || js("SELECT queen_internal.retention_run_cycle()");
        let failure = || {
            jb(&format!(
                "SELECT (SELECT jsonb_build_object('skip', skip, 'streak', streak, 'sqlstate', sqlstate, 'error', error)
                           FROM queen.retention_failures WHERE partition_id = {bad} AND phase = 1)"
            ))
        };
        let first = cycle();
        assert_eq!(
            segments(good),
            0,
            "the other partition was reclaimed: {first}"
        );
        assert_eq!(
            segments(bad),
            2,
            "the failing step undid its delete: {first}"
        );
        assert_eq!(first["failed"], 1, "{first}");
        let named = first["failing"][0].as_str().unwrap();
        assert!(
            named.contains(&format!("partition {bad} phase 1"))
                && named.contains("XX000")
                && named.contains("sabotaged step"),
            "{named}"
        );
        assert_eq!(
            failure(),
            json!({"skip": 1, "streak": 1, "sqlstate": "XX000", "error": "sabotaged step"})
        );
        let explained = js("SELECT queen.retention_explain('iso')");
        let part = explained["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["partition"] == "bad")
            .unwrap()
            .clone();
        assert_eq!(part["failing"][0]["sqlstate"], "XX000", "{explained}");
        assert!(
            part["pinnedBy"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p.as_str().unwrap().contains("sabotaged step")),
            "{part}"
        );

        // Backed off: skipped once, then tried (and failing) again, then
        // skipped twice.
        let second = cycle();
        assert_eq!(
            (second["failed"].clone(), second["backed_off"].clone()),
            (json!(0), json!(1)),
            "{second}"
        );
        let third = cycle();
        assert_eq!(third["failed"], 1, "{third}");
        assert_eq!(failure()["streak"], 2);
        assert_eq!(failure()["skip"], 2);
        Spi::run("DROP TRIGGER iso_sabotage ON queen.retention_history").unwrap();
        for _ in 0..2 {
            let skipped = cycle();
            assert_eq!(skipped["backed_off"], 1, "{skipped}");
            assert_eq!(segments(bad), 2);
        }
        let repaired = cycle();
        assert_eq!(repaired["failed"], 0, "{repaired}");
        assert_eq!(segments(bad), 0, "{repaired}");
        assert_eq!(
            failure(),
            Value::Null,
            "a step that succeeds clears its partition's error"
        );
    }

    #[pg_test(error = "p_max_rows: 0 must be at least 1")]
    fn a_step_refuses_an_empty_batch() {
        step(1, "now()", "NULL", 0);
    }

    #[pg_test]
    fn the_retention_series_carries_what_the_timeseries_said() {
        push(json!([{"queue": "rs1", "payload": 1}]));
        Spi::run(
            "INSERT INTO queen.retention_history (partition_id, retention_type, messages_deleted, segments_deleted, executed_at)
             SELECT p.id, t.kind, t.m, t.s, now() - t.ago
               FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id,
                    (VALUES ('retention', 5, 1, interval '2 hours'), ('retention', 7, 2, interval '2 hours'),
                            ('completed_retention', 3, 1, interval '2 hours'),
                            ('max_wait_time_eviction', 4, 0, interval '5 hours'),
                            ('__partition_deleted__', 0, 0, interval '2 hours')) t(kind, m, s, ago)
              WHERE q.name = 'rs1'",
        )
        .unwrap();
        let old = js("SELECT queen.retention_timeseries(now() - interval '1 day', 'hour')");
        let one = js("SELECT queen.retention_series(jsonb_build_object('from', now() - interval '1 day', 'bucket', 'hour', 'queue', 'rs1'))");
        assert_eq!(one["bucketMinutes"], 60);
        // The rows two and five hours ago are this test's alone.
        let points = one["series"].as_array().unwrap();
        assert_eq!(points.len(), 2, "{one}");
        let mut compared = 0;
        for (rule, prefix) in [
            ("retention", "retention"),
            ("completed_retention", "completedRetention"),
            ("max_wait_time_eviction", "eviction"),
        ] {
            for point in points.iter().filter(|p| p[format!("{prefix}Events")] != 0) {
                let row = old
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["bucket"] == point["bucket"] && r["retentionType"] == rule)
                    .unwrap_or_else(|| panic!("{rule} at {point} in {old}"));
                assert_eq!(
                    point[format!("{prefix}Msgs")],
                    row["messagesDeleted"],
                    "{row} {point}"
                );
                assert_eq!(
                    point[format!("{prefix}Segments")],
                    row["segmentsDeleted"],
                    "{row} {point}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 3);
        let t = &one["totals"];
        assert_eq!(
            (t["totalMsgs"].clone(), t["totalSegments"].clone()),
            (json!(19), json!(4))
        );
        assert_eq!(
            (t["eventCount"].clone(), t["retentionEvents"].clone()),
            (json!(4), json!(2))
        );
        assert_eq!(t["evictionMsgs"], 4);
    }
}
