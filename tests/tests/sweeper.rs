//! The sweeper workers (two of them in the test cluster) against real
//! connections: every timer fires exactly once while they race each other
//! and a SQL-driven sweep, a rolled-back schedule never fires, a schedule
//! committed after later timers fired still fires, and a claim whose holder
//! died is fired by someone else once its lease runs out.

use std::thread;
use std::time::{Duration, Instant};

use queen_it::*;
use serde_json::{json, Value};

fn messages_in(c: &mut postgres::Client, queue: &str) -> i64 {
    c.query_one(
        "SELECT COALESCE(sum(COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) + 1), 0)::int8 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1",
        &[&queue],
    )
    .unwrap()
    .get(0)
}

/// The tests here take turns: two of them change the sweepers' settings or
/// tables, and one counts the sweepers' probes.
static SLOW_PHASES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn wait_for(mut done: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what} within a minute");
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn every_timer_fires_exactly_once_with_racing_sweepers() {
    let _serial = SLOW_PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = connect();
    let queue = unique("timers");
    let mut txn = c.transaction().unwrap();
    for i in 0..300 {
        txn.query_one(
            "SELECT queen.timer_schedule($1, $2, $3::jsonb, 0, $4)",
            &[
                &queue,
                &format!("k{i}"),
                &json!({"i": i}),
                &format!("p{}", i % 3),
            ],
        )
        .unwrap();
    }
    txn.commit().unwrap();
    // A third sweeper, driven from SQL, races the two workers.
    let racer = {
        let queue = queue.clone();
        thread::spawn(move || {
            let mut c = connect();
            let mut fired = 0;
            let deadline = Instant::now() + Duration::from_secs(30);
            while messages_in(&mut c, &queue) < 300 && Instant::now() < deadline {
                let r: Value = c
                    .query_one("SELECT queen_internal.sweeper_run_once()", &[])
                    .unwrap()
                    .get(0);
                fired += r["fired"].as_i64().unwrap();
            }
            fired
        })
    };
    wait_for(|| messages_in(&mut c, &queue) >= 300, "300 timers fired");
    racer.join().unwrap();
    thread::sleep(Duration::from_millis(500));
    assert_eq!(messages_in(&mut c, &queue), 300, "no timer fired twice");
    let left: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_timers t WHERE queue = $1 AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
    let distinct: i64 = c
        .query_one(
            "SELECT count(DISTINCT h) FROM queen.log_txns t JOIN queen.log_partitions p ON p.id = t.partition_id
               JOIN queen.queues q ON q.id = p.queue_id, unnest(t.txn_hashes) h WHERE q.name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(distinct, 300, "one message per timer");
}

#[test]
fn a_rolled_back_schedule_never_fires() {
    let _serial = SLOW_PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = connect();
    let queue = unique("rollback");
    let mut txn = c.transaction().unwrap();
    txn.query_one("SELECT queen.timer_schedule($1, 'k', '1', 0)", &[&queue])
        .unwrap();
    thread::sleep(Duration::from_millis(1500));
    txn.rollback().unwrap();
    thread::sleep(Duration::from_millis(1500));
    assert_eq!(messages_in(&mut c, &queue), 0);
}

/// The workers' scans start past the timers they know fired (the floors):
/// a timer due at once, written by a transaction that commits only after
/// timers scheduled later have fired in every shard, still fires.
#[test]
fn a_timer_committed_after_later_ones_fired_still_fires() {
    let _serial = SLOW_PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = connect();
    let mut slow = connect();
    let late = unique("late-commit");
    let later = unique("fired-first");
    let mut txn = slow.transaction().unwrap();
    txn.query_one(
        "SELECT queen.timer_schedule($1, 'k', '\"late\"', 0)",
        &[&late],
    )
    .unwrap();
    thread::sleep(Duration::from_millis(50));
    // Timers due after it, over every shard, fire while it is not
    // committed; the sweepers probe past them again and again.
    c.execute(
        "SELECT count(*) FROM (SELECT queen.timer_schedule($1, 'k' || g, '1', 0)
                                 FROM generate_series(1, 256) g) s",
        &[&later],
    )
    .unwrap();
    wait_for(
        || messages_in(&mut c, &later) == 256,
        "the timers scheduled later fired",
    );
    thread::sleep(Duration::from_millis(1500));
    assert_eq!(messages_in(&mut c, &late), 0, "not committed yet");
    let m: Value = c
        .query_one("SELECT queen.sweeper_metrics()::jsonb", &[])
        .unwrap()
        .get(0);
    assert!(
        m["dueScanBehindMs"].as_i64().is_some_and(|b| b >= 1500),
        "the scans start no later than the open transaction began: {m}"
    );
    txn.commit().unwrap();
    wait_for(
        || messages_in(&mut c, &late) == 1,
        "the timer committed late fired",
    );
}

#[test]
fn a_dead_holders_claim_is_fired_after_its_lease() {
    let _serial = SLOW_PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = connect();
    let queue = unique("orphan");
    // Schedule and claim it in one transaction (no sweeper sees it
    // unclaimed), then "die": never fire.
    let mut txn = c.transaction().unwrap();
    txn.query_one(
        "SELECT queen.timer_schedule($1, 'k', '\"late\"', 0)",
        &[&queue],
    )
    .unwrap();
    let claimed: Value = txn
        .query_one(
            "WITH t AS (INSERT INTO queen.log_timer_claims (message_id, attempt, token, claimed_until)
                        SELECT message_id, 1, gen_random_uuid(), now() + interval '2 seconds'
                          FROM queen.log_timers WHERE queue = $1 RETURNING 1)
             SELECT json_build_object('claimed', (SELECT count(*) FROM t))",
            &[&queue],
        )
        .unwrap()
        .get(0);
    txn.commit().unwrap();
    assert_eq!(claimed["claimed"], 1);
    wait_for(
        || messages_in(&mut c, &queue) == 1,
        "the orphaned timer fired by a live sweeper",
    );
}

/// The sweepers sleep up to a minute in the test cluster; a timer scheduled
/// for now is fired at once because its commit sets their latches.
#[test]
fn a_commit_wakes_the_sleeping_sweepers() {
    let _serial = SLOW_PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = connect();
    let queue = unique("wake");
    // Push the slow phases' gates out of the way, so nothing but the wake
    // can cut the sweepers' sleep short; let them settle into it.
    for q in [
        "ALTER SYSTEM SET queen.kv_expire_every_ms = 600000",
        "ALTER SYSTEM SET queen.kv_usage_every_ms = 600000",
        "SELECT pg_reload_conf()",
    ] {
        c.execute(q, &[]).unwrap();
    }
    thread::sleep(Duration::from_millis(2500));
    // A schedule that rolls back wakes nobody: no probe runs.
    let probes = |c: &mut postgres::Client| -> i64 {
        let m: Value = c
            .query_one("SELECT queen.sweeper_metrics()::jsonb", &[])
            .unwrap()
            .get(0);
        m["probesTotal"].as_i64().unwrap()
    };
    let before = probes(&mut c);
    let mut txn = c.transaction().unwrap();
    txn.query_one(
        "SELECT queen.timer_schedule($1, 'never', '1', 0)",
        &[&queue],
    )
    .unwrap();
    txn.rollback().unwrap();
    thread::sleep(Duration::from_millis(1500));
    let after_rollback = probes(&mut c);
    let started = Instant::now();
    c.query_one(
        "SELECT queen.timer_schedule($1, 'now', '\"wake up\"', 0)",
        &[&queue],
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut woke = true;
    while messages_in(&mut c, &queue) == 0 {
        if Instant::now() >= deadline {
            woke = false;
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    for q in [
        "ALTER SYSTEM RESET queen.kv_expire_every_ms",
        "ALTER SYSTEM RESET queen.kv_usage_every_ms",
        "SELECT pg_reload_conf()",
    ] {
        c.execute(q, &[]).unwrap();
    }
    assert_eq!(
        after_rollback, before,
        "a rolled-back schedule woke a sweeper"
    );
    assert!(
        woke,
        "the timer waited for the sweepers' long sleep: no wake"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A slow phase that meets a configuration error (class 42) turns itself
/// off while the fire keeps serving; a configuration reload turns it on.
#[test]
fn a_broken_rollup_degrades_to_off_and_the_fire_goes_on() {
    let _serial = SLOW_PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = connect();
    let metrics = |c: &mut postgres::Client| -> Value {
        c.query_one("SELECT queen.sweeper_metrics()::jsonb", &[])
            .unwrap()
            .get(0)
    };
    let fired_before = metrics(&mut c)["firedTotal"].as_i64().unwrap();
    c.batch_execute("ALTER TABLE queen.kv_usage RENAME TO kv_usage_elsewhere")
        .unwrap();
    let restore = |c: &mut postgres::Client| {
        c.batch_execute("ALTER TABLE queen.kv_usage_elsewhere RENAME TO kv_usage")
            .unwrap()
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut c = connect();
        wait_for(
            || metrics(&mut c)["kvRollupOff"] == true,
            "the rollup turned off",
        );
        let queue = unique("degraded");
        c.query_one(
            "SELECT queen.timer_schedule($1, 'k', '1'::jsonb, 0)",
            &[&queue],
        )
        .unwrap();
        wait_for(
            || messages_in(&mut c, &queue) == 1,
            "the timer fired with the rollup off",
        );
        assert_eq!(
            metrics(&mut c)["kvPruneOff"],
            false,
            "the prune is untouched"
        );
    }));
    restore(&mut c);
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
    c.query_one("SELECT pg_reload_conf()", &[]).unwrap();
    wait_for(
        || metrics(&mut c)["kvRollupOff"] == false,
        "a reload turned the rollup back on",
    );
    let m = metrics(&mut c);
    assert!(m["firedTotal"].as_i64().unwrap() > fired_before, "{m}");
    assert!(m["probesTotal"].as_i64().unwrap() > 0);
}

/// A claim's timers are fired by their keys: beside thousands of timers
/// scheduled for later, a sweep that fires one due timer reads a handful of
/// rows, not every timer scheduled (no index serves a claim's token).
#[test]
fn a_sweep_reads_the_timers_it_fires_not_every_timer_scheduled() {
    const LATER: i32 = 10_000;
    let _serial = SLOW_PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = connect();
    let later = unique("later");
    c.execute(
        "SELECT count(*) FROM (SELECT queen.timer_schedule($1, 'k' || g, '1', 86400000)
                                 FROM generate_series(1, $2) g) s",
        &[&later, &LATER],
    )
    .unwrap();
    // The timers other tests fired are deleted first (the sweep passes
    // fired timers the retention cycle has not deleted yet).
    wait_for(
        || {
            c.query_one("SELECT queen_internal.retention_run_cycle()", &[])
                .unwrap();
            c.query_one("SELECT count(*) FROM queen.log_timers_done", &[])
                .unwrap()
                .get::<_, i64>(0)
                == 0
        },
        "the fired timers compacted",
    );
    let due = unique("due");
    // Scheduled in the sweep's own transaction: no worker sees it first.
    let mut t = c.transaction().unwrap();
    t.query_one(
        "SELECT queen.timer_schedule($1, 'k', '\"now\"', 0)",
        &[&due],
    )
    .unwrap();
    let before = rows_read(&mut t, &["queen.log_timers"]);
    let text: String = t
        .query_one("SELECT queen_internal.sweeper_run_once()::text", &[])
        .unwrap()
        .get(0);
    let read = rows_read(&mut t, &["queen.log_timers"]) - before;
    let swept: Value = serde_json::from_str(&text).unwrap();
    assert!(swept["fired"].as_i64().unwrap() >= 1, "{swept}");
    assert!(
        read <= 100,
        "a sweep of one due timer among {LATER} read {read} timer rows"
    );
    t.commit().unwrap();
    assert_eq!(messages_in(&mut c, &due), 1);
    c.execute("DELETE FROM queen.log_timers WHERE queue = $1", &[&later])
        .unwrap();
}
