//! The lock order through real connections: a dead-letter move and a
//! message delete take the partition before any leaf row (the dead letter,
//! the segment), as pushes and retention steps do, so none of them deadlocks
//! with another on the same partition.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use postgres::Client;
use queen_it::*;
use serde_json::{json, Value};

/// A queue with one message dead-lettered: (queue, partition id, dead
/// letter id, transaction id).
fn dead_letter(c: &mut Client, prefix: &str) -> (String, i64, i64, String) {
    let queue = unique(prefix);
    let txn = unique("t");
    push(
        c,
        &json!([{"queue": queue, "transactionId": txn, "payload": {"n": 1}}]),
    );
    let popped = pop(c, &queue, None, 1, &json!({}));
    ack(c, &acks_for(&popped, "dlq", None));
    let pid: i64 = messages(&popped)[0]["partitionId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let id: i64 = c
        .query_one(
            "SELECT id FROM queen.log_dlq WHERE partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    (queue, pid, id, txn)
}

/// The backend pid of a connection.
fn backend(c: &mut Client) -> i32 {
    c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0)
}

/// Waits until backend `pid` waits for a row lock of `relation` (a tuple
/// lock on it is how PostgreSQL queues a row-lock waiter); false after 10 s.
fn waits_on(c: &mut Client, pid: i32, relation: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                  WHERE l.pid = $1 AND l.locktype = 'tuple' AND l.relation = $2::text::regclass
                    AND a.wait_event_type = 'Lock'",
                &[&pid, &relation],
            )
            .unwrap()
            .get(0);
        if n > 0 {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Locks `sql`'s rows NOWAIT in a transaction of its own: Ok when nobody
/// holds them, the SQLSTATE otherwise.
fn try_lock(c: &mut Client, sql: &str, pid: i64) -> Result<(), String> {
    let mut t = c.transaction().unwrap();
    let r = t.query(sql, &[&pid]).map(|_| ()).map_err(|e| sqlstate(&e));
    t.rollback().unwrap();
    r
}

/// A move waits on the partition a retention step (or a push) holds
/// without holding its dead-letter row, so the step's widening of that row
/// goes through: with the row taken first the two deadlocked (40P01).
#[test]
fn a_move_waits_for_the_partition_before_it_takes_its_dead_letter() {
    let mut c = connect();
    let (queue, pid, id, txn) = dead_letter(&mut c, "lock-move");
    // The holder: a transaction that has the partition, as a step has.
    let mut holder = connect();
    let mut h = holder.transaction().unwrap();
    h.query(
        "SELECT 1 FROM queen.log_partitions WHERE id = $1 FOR UPDATE",
        &[&pid],
    )
    .unwrap();
    let mut mover = connect();
    let mover_pid = backend(&mut mover);
    let moving = thread::spawn(move || {
        mover
            .query_one("SELECT queen.dlq_replay($1)::jsonb", &[&id])
            .map(|r| r.get::<_, Value>(0))
            .map_err(|e| sqlstate(&e))
    });
    let mut observer = connect();
    assert!(
        waits_on(&mut observer, mover_pid, "queen.log_partitions"),
        "the move does not wait on the partition"
    );
    // It holds nothing of the dead letter while it waits.
    assert_eq!(
        try_lock(
            &mut observer,
            "SELECT 1 FROM queen.log_dlq WHERE partition_id = $1 FOR UPDATE NOWAIT",
            pid
        ),
        Ok(())
    );
    // The holder writes the row, as a step widening it does, and commits.
    h.execute(
        "UPDATE queen.log_dlq SET error = error WHERE id = $1",
        &[&id],
    )
    .unwrap();
    h.commit().unwrap();
    let moved = moving.join().unwrap().expect("the move goes through");
    assert_eq!(moved["result"], "moved");
    assert_eq!(moved["originalTransactionId"], txn.as_str());
    let left: i64 = c
        .query_one("SELECT count(*) FROM queen.log_dlq WHERE id = $1", &[&id])
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
    let popped = pop(&mut c, &queue, None, 10, &json!({}));
    assert_eq!(messages(&popped).len(), 1);
    assert_eq!(messages(&popped)[0]["data"], json!({"n": 1}));
}

/// A retry of a queue's dead letters (and of one message's) takes their
/// partitions before their rows, as a move does.
#[test]
fn a_retry_waits_for_the_partition_before_it_takes_its_dead_letters() {
    for by_message in [false, true] {
        let mut c = connect();
        let (queue, pid, id, txn) = dead_letter(&mut c, "lock-retry");
        let mut holder = connect();
        let mut h = holder.transaction().unwrap();
        h.query(
            "SELECT 1 FROM queen.log_partitions WHERE id = $1 FOR UPDATE",
            &[&pid],
        )
        .unwrap();
        let mut retrier = connect();
        let retrier_pid = backend(&mut retrier);
        let (q, t) = (queue.clone(), txn.clone());
        let retrying = thread::spawn(move || {
            let r = if by_message {
                retrier.query_one("SELECT queen.retry_dlq_message($1, $2)::jsonb", &[&pid, &t])
            } else {
                retrier.query_one("SELECT queen.retry_failed_by_queue($1)::jsonb", &[&q])
            };
            r.map(|r| r.get::<_, Value>(0)).map_err(|e| sqlstate(&e))
        });
        let mut observer = connect();
        assert!(
            waits_on(&mut observer, retrier_pid, "queen.log_partitions"),
            "the retry does not wait on the partition"
        );
        assert_eq!(
            try_lock(
                &mut observer,
                "SELECT 1 FROM queen.log_dlq WHERE partition_id = $1 FOR UPDATE NOWAIT",
                pid
            ),
            Ok(())
        );
        h.execute(
            "UPDATE queen.log_dlq SET error = error WHERE id = $1",
            &[&id],
        )
        .unwrap();
        h.commit().unwrap();
        let retried = retrying.join().unwrap().expect("the retry goes through");
        assert_eq!(retried["retried"].as_array().unwrap().len(), 1, "{retried}");
        let popped = pop(&mut c, &queue, None, 10, &json!({}));
        assert_eq!(messages(&popped).len(), 1);
    }
}

/// A delete waits on the partition without holding the segment: with the
/// segment taken first, a step holding the partition and locking the
/// segment waited on it while the delete waited on the partition.
#[test]
fn a_delete_waits_for_the_partition_before_it_takes_the_segment() {
    let mut c = connect();
    let queue = unique("lock-del");
    push(
        &mut c,
        &json!([{"queue": queue, "transactionId": "a", "payload": {"n": 1}},
                {"queue": queue, "transactionId": "b", "payload": {"n": 2}}]),
    );
    let pid: i64 = c
        .query_one(
            "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
              WHERE q.name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0);
    let mut holder = connect();
    let mut h = holder.transaction().unwrap();
    h.query(
        "SELECT 1 FROM queen.log_partitions WHERE id = $1 FOR UPDATE",
        &[&pid],
    )
    .unwrap();
    let mut deleter = connect();
    let deleter_pid = backend(&mut deleter);
    let deleting = thread::spawn(move || {
        deleter
            .query_one("SELECT queen.message_delete($1, 'a')::jsonb", &[&pid])
            .map(|r| r.get::<_, Value>(0))
            .map_err(|e| sqlstate(&e))
    });
    let mut observer = connect();
    assert!(
        waits_on(&mut observer, deleter_pid, "queen.log_partitions"),
        "the delete does not wait on the partition"
    );
    assert_eq!(
        try_lock(
            &mut observer,
            "SELECT 1 FROM queen.log_segments WHERE partition_id = $1 FOR UPDATE NOWAIT",
            pid
        ),
        Ok(())
    );
    // The holder takes the segment, as a step does, and commits.
    h.query(
        "SELECT 1 FROM queen.log_segments WHERE partition_id = $1 FOR UPDATE",
        &[&pid],
    )
    .unwrap();
    h.commit().unwrap();
    let deleted = deleting.join().unwrap().expect("the delete goes through");
    assert_eq!(deleted["deletedOffsets"], json!([0]));
    let popped = pop(&mut c, &queue, None, 10, &json!({}));
    let txns: Vec<String> = messages(&popped)
        .iter()
        .map(|m| m["transactionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(txns, ["b"]);
}

/// Moves, deletes, pushes, pops and retention steps on one partition from
/// three connections for a while: no deadlock, and every dead letter ends
/// moved back or still there.
#[test]
fn moves_and_deletes_beside_pushes_and_retention_never_deadlock() {
    let mut c = connect();
    let (queue, pid, _, _) = dead_letter(&mut c, "lock-mix");
    let stop = Arc::new(AtomicBool::new(false));
    let run_for = Duration::from_secs(4);
    let failures =
        |r: Result<(), postgres::Error>| -> Option<String> { r.err().map(|e| sqlstate(&e)) };
    // Dead-letters messages and moves them back, deleting every other one.
    let mover = {
        let queue = queue.clone();
        let stop = stop.clone();
        thread::spawn(move || {
            let mut c = connect();
            let mut errors = Vec::new();
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let txn = format!("m{n}");
                push(
                    &mut c,
                    &json!([{"queue": queue, "transactionId": txn, "payload": {"n": n}}]),
                );
                let popped = pop(&mut c, &queue, Some("g"), 10, &json!({}));
                if !messages(&popped).is_empty() {
                    ack(&mut c, &acks_for(&popped, "dlq", Some("g")));
                }
                let ids: Vec<i64> = c
                    .query(
                        "SELECT id FROM queen.log_dlq WHERE partition_id = $1 ORDER BY id",
                        &[&pid],
                    )
                    .unwrap()
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                for id in ids {
                    let r = c.query_one("SELECT queen.dlq_replay($1)::jsonb", &[&id]);
                    errors.extend(failures(r.map(|_| ())).filter(|s| s != "42704"));
                }
                if n.is_multiple_of(2) {
                    let r =
                        c.query_one("SELECT queen.message_delete($1, $2)::jsonb", &[&pid, &txn]);
                    errors.extend(failures(r.map(|_| ())).filter(|s| s != "42704"));
                }
            }
            errors
        })
    };
    // Retention steps over everything, and pushes beside them.
    let keeper = {
        let queue = queue.clone();
        let stop = stop.clone();
        thread::spawn(move || {
            let mut c = connect();
            let mut errors = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let r = c.query_one(
                    "SELECT queen_internal.log_retention_step_v1($1, now() + interval '1 hour', NULL, 100)",
                    &[&pid],
                );
                errors.extend(failures(r.map(|_| ())));
                push(&mut c, &json!([{"queue": queue, "payload": {"k": 1}}]));
            }
            errors
        })
    };
    thread::sleep(run_for);
    stop.store(true, Ordering::Relaxed);
    let mut errors = mover.join().unwrap();
    errors.extend(keeper.join().unwrap());
    assert!(errors.is_empty(), "{errors:?}");
    // Every dead letter left points at a message that was not deleted.
    let wrong: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_dlq d JOIN queen.log_deleted x
                 ON x.partition_id = d.partition_id AND x.message_offset = d.message_offset
              WHERE d.partition_id = $1",
            &[&pid],
        )
        .unwrap()
        .get(0);
    assert_eq!(wrong, 0);
}

/// The partition of a queue with `n` messages pushed one per segment and
/// then made two hours old.
fn aged_queue(c: &mut Client, prefix: &str, n: i32) -> (String, i64) {
    let queue = unique(prefix);
    for i in 0..n {
        push(
            c,
            &json!([{"queue": queue, "transactionId": format!("old{i}"), "payload": {"i": i}}]),
        );
    }
    let pid = pid_of(c, &queue, "Default");
    age_partition(c, pid, "2 hours");
    (queue, pid)
}

/// Waits until backend `pid` is blocked by backend `by`; false after 10 s.
fn blocked_by(c: &mut Client, pid: i32, by: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let blocked: bool = c
            .query_one("SELECT $2 = ANY(pg_blocking_pids($1))", &[&pid, &by])
            .unwrap()
            .get(0);
        if blocked {
            return true;
        }
        thread::sleep(Duration::from_millis(5));
    }
    false
}

const STEP: &str =
    "SELECT queen_internal.log_retention_step_v1($1, now() - interval '1 hour', NULL, 100)::jsonb";

/// A connection with a transaction open that pushed one message to
/// `queue` (and so holds its partition), and its backend pid.
fn open_push(queue: &str) -> (Client, i32) {
    let mut open = connect();
    let open_pid = backend(&mut open);
    open.batch_execute("BEGIN").unwrap();
    open.query_one(
        "SELECT queen.push($1)",
        &[&json!([{"queue": queue, "payload": {"new": true}}])],
    )
    .unwrap();
    (open, open_pid)
}

/// Makes `sql` (a retention step of partition `pid`) on a connection of its
/// own, in a thread, once it is blocked by backend `holder`.
fn step_blocked_by(sql: &str, pid: i64, holder: i32) -> thread::JoinHandle<Result<Value, String>> {
    let mut stepper = connect();
    let stepper_pid = backend(&mut stepper);
    let sql = sql.to_owned();
    let stepping = thread::spawn(move || {
        stepper
            .query_one(sql.as_str(), &[&pid])
            .map(|r| r.get::<_, Value>(0))
            .map_err(|e| sqlstate(&e))
    });
    let mut observer = connect();
    assert!(
        blocked_by(&mut observer, stepper_pid, holder),
        "the step does not wait for backend {holder}"
    );
    stepping
}

/// A push passes a transaction that holds the partition as a retention step
/// does while it deletes (KEY SHARE), where a message delete waits for it.
#[test]
fn a_push_passes_a_partition_held_as_a_retention_step_holds_it() {
    let mut c = connect();
    let (queue, pid) = aged_queue(&mut c, "lock-share", 2);
    let mut holder = connect();
    let mut h = holder.transaction().unwrap();
    h.query(
        "SELECT 1 FROM queen.log_partitions WHERE id = $1 FOR KEY SHARE",
        &[&pid],
    )
    .unwrap();
    let mut pusher = connect();
    pusher.batch_execute("SET lock_timeout = '5s'").unwrap();
    let pushed = pusher.query_one(
        "SELECT queen.push($1)::jsonb",
        &[&json!([{"queue": queue, "payload": {"new": true}}])],
    );
    assert!(pushed.is_ok(), "the push waited: {:?}", pushed.err());
    let mut deleter = connect();
    deleter.batch_execute("SET lock_timeout = '200ms'").unwrap();
    let deleted = deleter
        .query_one("SELECT queen.message_delete($1, 'old0')::jsonb", &[&pid])
        .map_err(|e| sqlstate(&e));
    assert_eq!(
        deleted.err().as_deref(),
        Some("55P03"),
        "the delete did not wait"
    );
    h.commit().unwrap();
}

/// A retention step beside a push still open on its partition: the step
/// deletes without waiting for it, cannot have the partition for its
/// watermark move in time, undoes its deletes (the segments are free while
/// it waits again), and once the push commits makes the step again; the
/// partition's oldest live time is then the pushed segment's.
#[test]
fn a_step_gives_way_to_an_open_push_and_then_finishes() {
    let mut c = connect();
    let (queue, pid) = aged_queue(&mut c, "lock-giveway", 3);
    let (mut open, open_pid) = open_push(&queue);
    let stepping = step_blocked_by(STEP, pid, open_pid);
    let mut observer = connect();
    // Past the short wait the step holds no segment while it waits.
    let deadline = Instant::now() + Duration::from_secs(10);
    while try_lock(
        &mut observer,
        "SELECT 1 FROM queen.log_segments WHERE partition_id = $1 FOR UPDATE NOWAIT",
        pid,
    )
    .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "the step keeps the segments it locked"
        );
        thread::sleep(Duration::from_millis(20));
    }
    open.batch_execute("COMMIT").unwrap();
    let r = stepping.join().unwrap().expect("the step goes through");
    assert_eq!(r["deleted"], 3, "{r}");
    assert_eq!(r["new_log_start"], 3, "{r}");
    assert_eq!(r["redone"], true, "{r}");
    let (start, fresh): (i64, bool) = {
        let row = c
            .query_one(
                "SELECT p.log_start, p.oldest_live_at = s.created_at
                   FROM queen.log_partitions p JOIN queen.log_segments s
                     ON s.partition_id = p.id AND s.base_offset = 3
                  WHERE p.id = $1",
                &[&pid],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!((start, fresh), (3, true));
    let popped = pop(&mut c, &queue, None, 10, &json!({}));
    assert_eq!(messages(&popped).len(), 1);
    assert_eq!(messages(&popped)[0]["data"], json!({"new": true}));
}

/// A transaction that pushes to a partition and then dead-letters one of
/// its old messages, while a retention step deletes that message's
/// segment: the step gives way, the transaction commits (no deadlock), and
/// the dead letter keeps its payload once the step has deleted the segment.
#[test]
fn a_push_then_a_dead_letter_in_one_transaction_never_deadlocks_with_a_step() {
    let mut c = connect();
    let (queue, pid) = aged_queue(&mut c, "lock-pushdlq", 1);
    let popped = pop(&mut c, &queue, None, 1, &json!({}));
    assert_eq!(messages(&popped).len(), 1);
    let (mut open, open_pid) = open_push(&queue);
    let stepping = step_blocked_by(STEP, pid, open_pid);
    // The dead-letter write wants the segment the step holds (unless it has
    // already given way): with a step that waited for the push for good, the
    // two would deadlock.
    let acked = open
        .query_one(
            "SELECT queen.ack($1)::jsonb",
            &[&acks_for(&popped, "dlq", None)],
        )
        .map(|r| r.get::<_, Value>(0))
        .map_err(|e| sqlstate(&e));
    let acked = acked.expect("the ack goes through");
    assert_eq!(acked[0]["dlq"], true, "{acked}");
    open.batch_execute("COMMIT").unwrap();
    let r = stepping.join().unwrap().expect("the step goes through");
    assert_eq!(r["deleted"], 1, "{r}");
    assert_eq!(r["redone"], true, "{r}");
    let kept: Value = c
        .query_one(
            "SELECT (queen.dlq_messages(jsonb_build_object('queue', $1::text))::jsonb)->'messages'->0->'data'",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(kept, json!({"i": 0}));
}

/// Two retention steps on one partition take turns, as they did when a step
/// held its partition FOR UPDATE: the second waits for the first to commit
/// and then deletes the next batch, instead of finding the first batch held
/// and answering that there is nothing to delete.
#[test]
fn two_steps_on_one_partition_take_turns() {
    let mut c = connect();
    let (_queue, pid) = aged_queue(&mut c, "lock-twosteps", 4);
    let two = |n: i32| {
        format!(
            "SELECT queen_internal.log_retention_step_v1($1, now() - interval '1 hour', NULL, {n})::jsonb"
        )
    };
    let mut first = connect();
    let first_pid = backend(&mut first);
    let mut t = first.transaction().unwrap();
    let r1: Value = t.query_one(&two(2), &[&pid]).unwrap().get(0);
    assert_eq!(r1["deleted"], 2, "{r1}");
    let stepping = step_blocked_by(&two(2), pid, first_pid);
    t.commit().unwrap();
    let r2 = stepping
        .join()
        .unwrap()
        .expect("the second step goes through");
    assert_eq!(r2["deleted"], 2, "{r2}");
    assert_eq!(r2["new_log_start"], 4, "{r2}");
    assert_eq!(r2.get("redone"), None, "{r2}");
}
