//! Retention through real connections: the workers, locks between steps,
//! the lease row under concurrent claimers, cleanup racing pushes, and an
//! audit row that exists exactly when its delete committed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use queen_it::*;
use serde_json::{json, Value};

/// Pushes `segments` single-message segments and makes them `age` old.
fn old_backlog(c: &mut postgres::Client, queue: &str, segments: usize, age: &str) -> i64 {
    for i in 0..segments {
        push(c, &json!([{"queue": queue, "payload": i}]));
    }
    let pid = pid_of(c, queue, "Default");
    age_partition(c, pid, age);
    pid
}

/// The maintenance worker sweeps on its own once the task is due.
#[test]
fn the_worker_applies_retention() {
    let mut c = connect();
    let queue = unique("worker");
    c.query_one(
        "SELECT queen.configure($1, '{\"retentionEnabled\": true, \"retentionSeconds\": 60}')",
        &[&queue],
    )
    .unwrap();
    let pid = old_backlog(&mut c, &queue, 3, "2 hours");
    c.execute(
        "UPDATE queen.maintenance_leases SET next_due_at = now() WHERE task = 'retention'",
        &[],
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left: i64 = c
            .query_one(
                "SELECT count(*) FROM queen.log_segments WHERE partition_id = $1",
                &[&pid],
            )
            .unwrap()
            .get(0);
        if left == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the worker did not sweep within a minute"
        );
        thread::sleep(Duration::from_millis(200));
    }
    let audited: i64 = c
        .query_one("SELECT COALESCE(sum(messages_deleted), 0)::int8 FROM queen.retention_history WHERE partition_id = $1", &[&pid])
        .unwrap()
        .get(0);
    assert_eq!(audited, 3);
    // Between cycles nobody holds the sweeper's lock: pause the task, let a
    // running cycle end, and look.
    c.execute(
        "UPDATE queen.maintenance_leases SET enabled = false WHERE task = 'retention'",
        &[],
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let running: i64 = c
            .query_one("SELECT count(*) FROM queen.maintenance_leases WHERE task = 'retention' AND lease_holder IS NOT NULL", &[])
            .unwrap()
            .get(0);
        if running == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "a cycle did not end");
        thread::sleep(Duration::from_millis(100));
    }
    let held: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 737001",
            &[],
        )
        .unwrap()
        .get(0);
    c.execute(
        "UPDATE queen.maintenance_leases SET enabled = true WHERE task = 'retention'",
        &[],
    )
    .unwrap();
    assert_eq!(held, 0, "no exit path leaves 737001 held");
}

/// A push into a partition that is being drained waits for at most the one
/// step holding the partition lock, never for the drain: it commits while
/// the drain still has steps to go.
#[test]
fn a_push_during_a_drain_waits_one_step_at_most() {
    let mut c = connect();
    let queue = unique("drain");
    let pid = old_backlog(&mut c, &queue, 400, "2 hours");
    let started = Arc::new(Barrier::new(2));
    let drainer = {
        let started = Arc::clone(&started);
        thread::spawn(move || {
            let mut c = connect();
            started.wait();
            let mut steps = 0;
            loop {
                let r: Value = c
                    .query_one("SELECT queen_internal.log_retention_step_v1($1, now() - interval '1 hour', NULL, 1)::json", &[&pid])
                    .unwrap()
                    .get(0);
                steps += 1;
                if r["done"] == true || r["deleted"] == 0 {
                    return steps;
                }
            }
        })
    };
    started.wait();
    thread::sleep(Duration::from_millis(20));
    let pushed = push(&mut c, &json!([{"queue": queue, "payload": "during"}]));
    let offset = pushed[0]["offset"].as_i64().unwrap();
    let steps = drainer.join().expect("drainer");
    assert!(steps > 1);
    // Steps committed after the push: the push did not wait for the drain.
    let later: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.retention_history h
              WHERE h.partition_id = $1
                AND h.executed_at > (SELECT created_at FROM queen.log_segments WHERE partition_id = $1 AND base_offset = $2)",
            &[&pid, &offset],
        )
        .unwrap()
        .get(0);
    assert!(later > 0, "the push landed mid-drain");
    // And the fresh message survived the drain.
    let kept: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_segments WHERE partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    assert_eq!(kept, 1);
}

/// Two claimers at once: exactly one gets the task.
#[test]
fn two_claimers_one_token() {
    let task = unique("task");
    let mut c = connect();
    c.execute(
        "INSERT INTO queen.maintenance_leases (task) VALUES ($1)",
        &[&task],
    )
    .unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let claimers: Vec<_> = (0..2)
        .map(|i| {
            let task = task.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let mut c = connect();
                barrier.wait();
                let token: Option<i64> = c
                    .query_one(
                        "SELECT queen_internal.maintenance_claim_v1($1, $2, 60000)",
                        &[&task, &format!("claimer {i}")],
                    )
                    .unwrap()
                    .get(0);
                token
            })
        })
        .collect();
    let tokens: Vec<Option<i64>> = claimers.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        tokens.iter().filter(|t| t.is_some()).count(),
        1,
        "{tokens:?}"
    );
    c.execute(
        "DELETE FROM queen.maintenance_leases WHERE task = $1",
        &[&task],
    )
    .unwrap();
}

/// Cleanup racing pushes: every push either fails loudly or its message is
/// still there afterwards.
#[test]
fn cleanup_racing_a_push_loses_nothing_silently() {
    let mut c = connect();
    let queue = unique("cleanup");
    // Many empty, long idle partitions.
    for p in 0..40 {
        push(
            &mut c,
            &json!([{"queue": queue, "partition": format!("p{p}"), "payload": p}]),
        );
    }
    c.execute(
        "UPDATE queen.log_segments s SET created_at = s.created_at - interval '40 days'
           FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
          WHERE s.partition_id = p.id AND q.name = $1",
        &[&queue],
    )
    .unwrap();
    let pids: Vec<i64> = c
        .query("SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1", &[&queue])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for pid in &pids {
        c.query_one(
            "SELECT queen_internal.log_retention_step_v1($1, now(), NULL, 100)",
            &[pid],
        )
        .unwrap();
    }
    c.execute(
        "UPDATE queen.log_partitions SET created_at = now() - interval '40 days', last_write_at = now() - interval '40 days' WHERE id = ANY($1)",
        &[&pids],
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let pusher = {
        let queue = queue.clone();
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut c = connect();
            let mut landed = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let txn = format!("race-{i}");
                match c.query_one(
                    "SELECT queen.push($1)",
                    &[&json!([{"queue": queue, "partition": format!("p{}", i % 40), "payload": i, "transactionId": txn}])],
                ) {
                    Ok(row) => {
                        let v: Value = row.get(0);
                        landed.push((v[0]["partitionId"].as_str().unwrap().parse::<i64>().unwrap(), txn));
                    }
                    Err(e) => assert!(["40001", "23503"].contains(&sqlstate(&e).as_str()), "loud and retryable: {e}"),
                }
                i += 1;
            }
            landed
        })
    };
    let mut deleted = 0i64;
    for _ in 0..20 {
        let r: Value = c
            .query_one("SELECT queen_internal.log_partition_cleanup_step_v1(now() - interval '30 days', 5)::json", &[])
            .unwrap()
            .get(0);
        deleted += r["deleted"].as_i64().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let landed = pusher.join().expect("pusher");
    assert!(
        deleted > 0 && !landed.is_empty(),
        "both sides ran: {deleted} deleted, {} pushed",
        landed.len()
    );
    for (pid, txn) in landed {
        let found: i64 = c
            .query_one(
                "SELECT count(*) FROM queen.log_txns WHERE partition_id = $1 AND $2 = ANY(txn_hashes)",
                &[&pid, &txn_hash(&txn)],
            )
            .unwrap()
            .get(0);
        assert_eq!(
            found, 1,
            "{txn} in partition {pid} was acknowledged and must still be there"
        );
    }
}

/// The same 64-bit hash the engine keeps for a transaction id.
fn txn_hash(t: &str) -> i64 {
    xxhash_rust::xxh3::xxh3_64(t.as_bytes()) as i64
}

/// An error after the delete rolls the whole step back: segments and their
/// watermark stay, and no audit row claims a delete that did not happen.
#[test]
fn the_audit_row_exists_exactly_when_the_delete_committed() {
    let mut c = connect();
    let queue = unique("audit");
    let pid = old_backlog(&mut c, &queue, 3, "2 hours");
    let mut txn = c.transaction().unwrap();
    txn.batch_execute(&format!(
        "CREATE FUNCTION pg_temp.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$;
         CREATE TRIGGER refuse_{pid} BEFORE INSERT ON queen.retention_history FOR EACH ROW
           WHEN (NEW.partition_id = {pid}) EXECUTE FUNCTION pg_temp.refuse();"
    ))
    .unwrap();
    let err = txn
        .query_one(
            "SELECT queen_internal.log_retention_step_v1($1, now(), NULL, 100)",
            &[&pid],
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("injected") || format!("{err:?}").contains("injected"),
        "{err:?}"
    );
    txn.rollback().unwrap();
    let segments: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_segments WHERE partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    let start: i64 = c
        .query_one(
            "SELECT log_start FROM queen.log_partitions WHERE id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    let audits: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.retention_history WHERE partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    assert_eq!((segments, start, audits), (3, 0, 0));
    let r: Value = c
        .query_one(
            "SELECT queen_internal.log_retention_step_v1($1, now(), NULL, 100)::json",
            &[&pid],
        )
        .unwrap()
        .get(0);
    assert_eq!(r["deleted"], 3);
    let audits: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.retention_history WHERE partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    assert_eq!(audits, 1);
}

/// A transaction whose only write is one retention step commits without
/// waiting for the WAL flush (the server says so at DEBUG1), and what the
/// step deleted stays deleted. One that wrote something before the step,
/// one rolled back, and every step with `queen.retention_async_commit` off
/// commit as usual.
#[test]
fn only_a_step_only_commit_skips_the_wal_flush() {
    let (mut c, notices, table) = noticed_session();
    let queue = unique("stepcommit");
    let pid = old_backlog(&mut c, &queue, 4, "2 hours");
    let step = format!("SELECT queen_internal.log_retention_step_v1({pid}, now(), NULL, 1)");
    let relaxed = |c: &mut postgres::Client, sql: &str| {
        says(c, &notices, sql, "retention step's transaction")
    };
    assert!(relaxed(&mut c, &step), "a step alone");
    assert!(
        !relaxed(
            &mut c,
            &format!("BEGIN; INSERT INTO {table} VALUES (1); {step}; COMMIT")
        ),
        "written before"
    );
    assert!(
        !relaxed(&mut c, &format!("BEGIN; {step}; ROLLBACK")),
        "rolled back"
    );
    c.batch_execute("SET queen.retention_async_commit = off")
        .unwrap();
    assert!(!relaxed(&mut c, &step), "turned off");
    c.batch_execute("RESET queen.retention_async_commit")
        .unwrap();
    assert!(relaxed(&mut c, &step), "a step alone, again");
    let (left, start): (i64, i64) = {
        let r = c
            .query_one(
                "SELECT (SELECT count(*) FROM queen.log_segments WHERE partition_id = $1),
                        (SELECT log_start FROM queen.log_partitions WHERE id = $1)",
                &[&pid],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!(
        (left, start),
        (0, 4),
        "four steps of one segment each committed"
    );
    c.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}
