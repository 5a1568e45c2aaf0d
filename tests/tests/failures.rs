//! Failures through real connections: every failure ever recorded is either
//! still a dead letter, counted as pruned, or was retried, under concurrent
//! acks, retries and retention; and a reclaim that fails after widening its
//! dead letters leaves everything as it was.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use queen_it::*;
use serde_json::{json, Value};

#[test]
fn failures_are_conserved_under_acks_retries_and_retention() {
    let queue = unique("conserve");
    let mut c = connect();
    c.query_one(
        "SELECT queen.configure($1, '{\"dlqRetentionSeconds\": 1}')",
        &[&queue],
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let recorded = Arc::new(AtomicI64::new(0));
    let retried = Arc::new(AtomicI64::new(0));

    let failer = {
        let (queue, stop, recorded) = (queue.clone(), Arc::clone(&stop), Arc::clone(&recorded));
        thread::spawn(move || {
            let mut c = connect();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let items: Vec<Value> = (0..5).map(|k| json!({"queue": queue, "partition": format!("p{}", k % 2), "payload": i * 5 + k})).collect();
                push(&mut c, &Value::Array(items));
                i += 1;
                let popped = pop(&mut c, &queue, Some("g"), 10, &json!({"partitions": 2}));
                if messages(&popped).is_empty() {
                    continue;
                }
                let res = ack(&mut c, &acks_for(&popped, "dlq", Some("g")));
                let ok = res
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| r["success"] == true && r["dlq"] == true)
                    .count();
                recorded.fetch_add(ok as i64, Ordering::Relaxed);
            }
        })
    };
    let retrier = {
        let (queue, stop, retried) = (queue.clone(), Arc::clone(&stop), Arc::clone(&retried));
        thread::spawn(move || {
            let mut c = connect();
            while !stop.load(Ordering::Relaxed) {
                // A slow retrier, so that some dead letters live long enough
                // for retention to purge them.
                let r: Value = c
                    .query_one("SELECT queen.retry_failed_by_queue($1, 'g', 3)", &[&queue])
                    .unwrap()
                    .get(0);
                let n = r["retried"].as_array().unwrap().len() as i64;
                assert!(n <= r["matched"].as_i64().unwrap());
                retried.fetch_add(n, Ordering::Relaxed);
                thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let sweeper = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut c = connect();
            c.batch_execute("SET queen.failed_retention = 0").unwrap();
            let mut pruned = 0;
            while !stop.load(Ordering::Relaxed) {
                let r: Value = c
                    .query_one("SELECT queen_internal.retention_run_cycle()", &[])
                    .unwrap()
                    .get(0);
                pruned += r["dlq_pruned"].as_i64().unwrap();
                thread::sleep(Duration::from_millis(200));
            }
            pruned
        })
    };
    thread::sleep(Duration::from_secs(4));
    stop.store(true, Ordering::Relaxed);
    failer.join().expect("failer");
    retrier.join().expect("retrier");
    let swept = sweeper.join().expect("sweeper");

    let counts: Value = c
        .query_one("SELECT queen.queue_counts($1)", &[&queue])
        .unwrap()
        .get(0);
    let live = counts["failed"].as_i64().unwrap();
    let pruned = counts["pruned_failed"].as_i64().unwrap();
    let recorded = recorded.load(Ordering::Relaxed);
    let retried = retried.load(Ordering::Relaxed);
    assert!(
        recorded > 0 && pruned > 0 && retried > 0,
        "all three ran: {recorded} recorded, {pruned} pruned, {retried} retried"
    );
    // The sweeps purged this queue's rows and maybe other queues' too.
    assert!(
        pruned <= swept,
        "the rollup counts only what the purges removed: {pruned} > {swept}"
    );
    assert_eq!(
        live + pruned + retried,
        recorded,
        "live {live} + pruned {pruned} + retried {retried}"
    );
}

/// An error after the dead letters were widened and before the segments go
/// rolls the whole step back: the rows are narrow again, the segments stay.
#[test]
fn a_failed_reclaim_leaves_dead_letters_and_segments_as_they_were() {
    let queue = unique("inject");
    let mut c = connect();
    push(
        &mut c,
        &json!([{"queue": queue, "payload": {"keep": "me"}}]),
    );
    let popped = pop(&mut c, &queue, None, 1, &json!({}));
    ack(&mut c, &acks_for(&popped, "dlq", None));
    let pid: i64 = messages(&popped)[0]["partitionId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    c.execute("UPDATE queen.log_segments SET created_at = created_at - interval '2 hours' WHERE partition_id = $1", &[&pid]).unwrap();
    let mut txn = c.transaction().unwrap();
    txn.batch_execute(&format!(
        "CREATE FUNCTION pg_temp.refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$;
         CREATE TRIGGER refuse_{pid} BEFORE DELETE ON queen.log_segments FOR EACH ROW
           WHEN (OLD.partition_id = {pid}) EXECUTE FUNCTION pg_temp.refuse_delete();"
    ))
    .unwrap();
    let err = txn
        .query_one(
            "SELECT queen_internal.log_retention_step_v1($1, now() - interval '1 hour', NULL, 100)",
            &[&pid],
        )
        .unwrap_err();
    assert!(format!("{err:?}").contains("injected"), "{err:?}");
    txn.rollback().unwrap();
    let narrow: i64 = c
        .query_one("SELECT count(*) FROM queen.log_dlq WHERE partition_id = $1 AND created_at IS NULL AND payload IS NULL", &[&pid])
        .unwrap()
        .get(0);
    let segments: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_segments WHERE partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    assert_eq!((narrow, segments), (1, 1));
    // Without the fault the same step widens and reclaims.
    c.query_one(
        "SELECT queen_internal.log_retention_step_v1($1, now() - interval '1 hour', NULL, 100)",
        &[&pid],
    )
    .unwrap();
    let wide: Value = c.query_one("SELECT convert_from(payload, 'UTF8')::jsonb FROM queen.log_dlq WHERE partition_id = $1", &[&pid]).unwrap().get(0);
    assert_eq!(wide, json!({"keep": "me"}));
}
