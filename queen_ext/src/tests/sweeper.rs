//! Timer tests inside PostgreSQL: schedule, fire exactly once, cancel, the
//! byte cap, and a claim that is not fired until its lease runs out.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use serde_json::json;

    use crate::tests::support::{js, n};

    /// Makes every scheduled timer due.
    fn due_now() {
        Spi::run("UPDATE queen.log_timers SET deliver_at = now() - interval '1 second'").unwrap();
    }

    /// Timers that have not fired (a fired one stays, marked done, until
    /// the retention cycle deletes it).
    fn pending() -> i64 {
        n("SELECT count(*) FROM queen.log_timers t
            WHERE NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)")
    }

    /// Ends every claim: as if its holder died and its lease ran out.
    fn expire_claims() {
        Spi::run("UPDATE queen.log_timer_claims SET claimed_until = now() - interval '1 second'")
            .unwrap();
    }

    /// Rows of the timer tables this transaction updated and deleted.
    fn timer_rows_changed() -> i64 {
        n("SELECT COALESCE(sum(n_tup_upd + n_tup_del), 0)::int8 FROM pg_stat_xact_user_tables
            WHERE schemaname = 'queen' AND relname IN ('log_timers', 'log_timer_claims', 'log_timers_done')")
    }

    #[pg_test]
    fn a_timer_fires_once_into_its_queue() {
        let s = js(
            "SELECT queen.timer_schedule('tq', 'remind-1', '{\"hello\": 1}', 60000, 'p1', 'tx-1')",
        );
        assert_eq!(s["transactionId"], "tx-1");
        assert_eq!(
            js("SELECT queen_internal.sweeper_run_once()")["fired"],
            0,
            "not due yet"
        );
        let probe = js("SELECT queen_internal.sweeper_probe_v1()");
        assert!(probe["nextInMs"].as_i64().unwrap() > 50_000);
        due_now();
        let probe = js("SELECT queen_internal.sweeper_probe_v1()");
        assert_eq!(probe["due"], 1);
        assert_eq!(js("SELECT queen_internal.sweeper_run_once()")["fired"], 1);
        assert_eq!(
            js("SELECT queen_internal.sweeper_run_once()")["fired"],
            0,
            "exactly once"
        );
        let popped = js("SELECT queen.pop('tq', 'p1', NULL, 10, '{}')");
        assert_eq!(popped["messages"].as_array().unwrap().len(), 1);
        assert_eq!(popped["messages"][0]["data"], json!({"hello": 1}));
        assert_eq!(popped["messages"][0]["transactionId"], "tx-1");
        assert_eq!(pending(), 0);
        assert_eq!(
            js("SELECT queen.timer_peek('tq', 'remind-1')")["found"],
            false,
            "a fired timer is gone for its readers"
        );
    }

    /// Claims and fires write new rows only; the retention cycle deletes a
    /// fired timer with its claim and its mark, and a timer scheduled again
    /// under a fired one's key is a new timer that the compaction keeps.
    #[pg_test]
    fn firing_updates_and_deletes_no_row_and_the_cycle_compacts_what_fired() {
        for i in 0..5 {
            js(&format!(
                "SELECT queen.timer_schedule('tq6', 'k{i}', '{i}', 0)"
            ));
        }
        due_now();
        let before = timer_rows_changed();
        let claim = js("SELECT queen_internal.sweeper_claim_v1(0, 10, 60000)");
        assert_eq!(claim["claimed"], 5);
        let token = claim["token"].as_str().unwrap().to_owned();
        assert_eq!(
            js(&format!("SELECT queen_internal.sweeper_fire_v1('{token}')"))["fired"],
            5
        );
        assert_eq!(
            timer_rows_changed(),
            before,
            "a claim and a fire update and delete no timer row"
        );
        assert_eq!(pending(), 0);
        assert_eq!(n("SELECT count(*) FROM queen.log_timers_done"), 5);
        // Scheduled again under a fired key: a new timer, not a reschedule.
        let again = js("SELECT queen.timer_schedule('tq6', 'k0', '\"again\"', 60000)");
        assert_eq!(again["status"], "scheduled", "{again}");
        let report = js("SELECT queen_internal.retention_run_cycle()");
        assert!(
            report["timers_compacted"].as_i64().unwrap() >= 14,
            "4 timers, 5 claims and 5 marks: {report}"
        );
        assert_eq!(n("SELECT count(*) FROM queen.log_timers_done"), 0);
        assert_eq!(n("SELECT count(*) FROM queen.log_timer_claims"), 0);
        assert_eq!(
            n("SELECT count(*) FROM queen.log_timers WHERE queue = 'tq6'"),
            1,
            "the timer scheduled again stays"
        );
        assert_eq!(
            js("SELECT queen.timer_peek('tq6', 'k0')")["payload"],
            "ImFnYWluIg==",
            "with its own payload"
        );
    }

    /// A timer whose fire fails never holds back the others of its claim;
    /// it keeps its claim (tried again once the claim expires) with its
    /// error, and is set aside after its last allowed attempt.
    #[pg_test]
    fn a_timer_that_can_not_fire_is_retried_then_set_aside() {
        Spi::run("SET queen.sweeper_max_fire_attempts = 3").unwrap();
        js("SELECT queen.timer_schedule('tgood', 'a', '1', 0)");
        js("SELECT queen.timer_schedule('tbad', 'b', '2', 0)");
        js("SELECT queen.timer_schedule('tgood', 'c', '3', 0)");
        // The bad queue refuses every write of a segment.
        Spi::run(
            "CREATE FUNCTION public.refuse_tbad() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF EXISTS (SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                               WHERE p.id = NEW.partition_id AND q.name = 'tbad')
                   THEN RAISE EXCEPTION 'tbad refuses writes' USING ERRCODE = 'P0001'; END IF;
                   RETURN NEW; END $$;
             CREATE TRIGGER refuse_tbad BEFORE INSERT ON queen.log_segments
                 FOR EACH ROW EXECUTE FUNCTION public.refuse_tbad();",
        )
        .unwrap();
        due_now();
        let first = js("SELECT queen_internal.sweeper_run_once()");
        assert_eq!(
            (
                first["fired"].clone(),
                first["failed"].clone(),
                first["setAside"].clone()
            ),
            (json!(2), json!(1), json!(0)),
            "{first}"
        );
        let popped = js("SELECT queen.pop('tgood', NULL, NULL, 10, '{}')");
        assert_eq!(
            popped["messages"].as_array().unwrap().len(),
            2,
            "the good timers fired"
        );
        let row = js("SELECT queen.timer_peek('tbad', 'b')");
        assert_eq!(row["attempts"], 1);
        assert_eq!(
            row["claimed"], true,
            "it keeps its claim until the claim expires"
        );
        assert!(
            row["lastError"]
                .as_str()
                .unwrap()
                .contains("tbad refuses writes"),
            "{row}"
        );
        assert_eq!(
            js("SELECT queen_internal.sweeper_run_once()")["fired"],
            0,
            "not tried again while claimed"
        );
        let expire = expire_claims;
        expire();
        assert_eq!(
            js("SELECT queen_internal.sweeper_run_once()")["failed"],
            1,
            "tried again after its claim expired"
        );
        expire();
        let last = js("SELECT queen_internal.sweeper_run_once()");
        assert_eq!(last["setAside"], 1, "{last}");
        assert_eq!(pending(), 0, "set aside, never fired in a loop");
        assert_eq!(
            n("SELECT count(*) FROM queen.log_timers WHERE queue = 'tbad'"),
            0,
            "moved out of the timers"
        );
        let aside = js("SELECT json_build_object('queue', queue, 'key', timer_key, 'attempts', attempts, 'payload', convert_from(payload, 'UTF8'), 'error', last_error)
                          FROM queen.log_timers_failed");
        assert_eq!(
            (
                aside["queue"].clone(),
                aside["key"].clone(),
                aside["attempts"].clone(),
                aside["payload"].clone()
            ),
            (json!("tbad"), json!("b"), json!(3), json!("2"))
        );
        assert!(
            aside["error"].as_str().unwrap().contains("P0001"),
            "{aside}"
        );
        assert_eq!(js("SELECT queen.sweeper_metrics()")["timersSetAside"], 1);
        let listed = js("SELECT queen.timers_set_aside('tbad')");
        assert_eq!(listed["timers"][0]["timerKey"], "b", "{listed}");
        assert_eq!(
            listed["timers"][0]["payload"], "Mg==",
            "the payload, base64"
        );
        expire();
        assert_eq!(
            js("SELECT queen_internal.sweeper_run_once()")["emptyClaim"],
            true
        );
    }

    #[pg_test]
    fn rescheduling_replaces_and_cancel_removes() {
        js("SELECT queen.timer_schedule('tq2', 'k', '1', 60000)");
        js("SELECT queen.timer_schedule('tq2', 'k', '2', 60000)");
        assert_eq!(n("SELECT count(*) FROM queen.log_timers"), 1);
        assert_eq!(
            js("SELECT queen.timer_cancel('tq2', 'k')")["cancelled"],
            true
        );
        assert_eq!(
            js("SELECT queen.timer_cancel('tq2', 'k')")["cancelled"],
            false
        );
        due_now();
        assert_eq!(
            js("SELECT queen_internal.sweeper_run_once()")["fired"],
            0,
            "a cancelled timer never fires"
        );
    }

    #[pg_test]
    fn a_claim_is_fired_only_by_its_holder_until_it_expires() {
        js("SELECT queen.timer_schedule('tq3', 'a', '1', 0)");
        js("SELECT queen.timer_schedule('tq3', 'b', '2', 0)");
        due_now();
        let claim = js("SELECT queen_internal.sweeper_claim_v1(0, 10, 60000)");
        assert_eq!(claim["claimed"], 2);
        // Another sweeper finds nothing to claim while the lease holds.
        assert_eq!(
            js("SELECT queen_internal.sweeper_claim_v1(5, 10, 60000)")["claimed"],
            0
        );
        // A fire under someone else's token fires nothing.
        assert_eq!(
            js("SELECT queen_internal.sweeper_fire_v1('00000000-0000-4000-8000-000000000000')")
                ["fired"],
            0
        );
        // The holder dies; once its lease is over another claims and fires.
        expire_claims();
        let again = js("SELECT queen_internal.sweeper_claim_v1(9, 10, 60000)");
        assert_eq!(again["claimed"], 2);
        let token = again["token"].as_str().unwrap();
        assert_eq!(
            js(&format!(
                "SELECT queen_internal.sweeper_fire_v1('{}')",
                token
            ))["fired"],
            2
        );
        // The first holder's late fire finds nothing.
        let late = claim["token"].as_str().unwrap();
        assert_eq!(
            js(&format!(
                "SELECT queen_internal.sweeper_fire_v1('{}')",
                late
            ))["fired"],
            0
        );
        assert_eq!(
            n("SELECT sum(COALESCE(t.end_offset, p.log_start - 1) + 1)::int8 FROM queen.log_partitions p \
               LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s \
               WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true"),
            2
        );
    }

    #[pg_test]
    fn a_fire_is_capped_in_bytes_and_resumes() {
        for i in 0..5 {
            js(&format!(
                "SELECT queen.timer_schedule('tq4', 'k{i}', '\"{}\"', 0)",
                "x".repeat(100)
            ));
        }
        due_now();
        let claim = js("SELECT queen_internal.sweeper_claim_v1(0, 10, 60000)");
        let token = claim["token"].as_str().unwrap().to_owned();
        let first = js(&format!(
            "SELECT queen_internal.sweeper_fire_v1('{token}', 250)"
        ));
        assert_eq!(first["fired"], 2);
        assert_eq!(first["done"], false);
        let rest = js(&format!(
            "SELECT queen_internal.sweeper_fire_v1('{token}', 100000)"
        ));
        assert_eq!(rest["fired"], 3);
        assert_eq!(rest["done"], true);
    }

    #[pg_test]
    fn a_transaction_schedules_timers_with_its_pushes() {
        let r = js("SELECT queen.transaction('{\"operations\": [{\"type\": \"push\", \"items\": [{\"queue\": \"tx-t\", \"payload\": 1}]}],
                     \"timers\": [{\"op\": \"schedule\", \"queue\": \"tx-t\", \"timerKey\": \"later\", \"payload\": \"Mg==\", \"delayMs\": 0}]}')");
        assert_eq!(r["success"], true);
        assert_eq!(
            r["results"][1]["status"], "scheduled",
            "the timer rider follows the pushed items"
        );
        assert_eq!(r["results"][1]["index"], 1);
        assert_eq!(
            n("SELECT count(*) FROM queen.log_timers WHERE queue = 'tx-t'"),
            1
        );
        due_now();
        assert_eq!(js("SELECT queen_internal.sweeper_run_once()")["fired"], 1);
        assert_eq!(
            n("SELECT sum(COALESCE(t.end_offset, p.log_start - 1) + 1)::int8 FROM queen.log_partitions p \
               LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s \
               WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true"),
            2
        );
    }

    #[pg_test(error = "timer_key: must not be empty")]
    fn an_empty_timer_key_is_refused() {
        js("SELECT queen.timer_schedule('tq5', '', '1', 0)");
    }
}
