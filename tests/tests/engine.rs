//! The engine through real connections: concurrency, leases that run out in
//! real time, transactions that roll back, and bad input.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use queen_it::*;
use serde_json::{json, Value};

/// What each consumer saw, by partition: (transaction id, offset, payload).
type Seen = HashMap<String, Vec<(String, i64, Value)>>;

/// N pushers and M poppers over a few partitions: every message is delivered
/// and acknowledged exactly once per consumer group, in order within its
/// partition, and no statement fails (no deadlock, no serialization error).
#[test]
fn exactly_once_per_group_under_concurrency() {
    const PUSHERS: usize = 4;
    const PER_PUSHER: usize = 300;
    const PARTITIONS: usize = 3;
    const POPPERS: usize = 4;
    let queue = unique("eo");
    let total = PUSHERS * PER_PUSHER;

    let pushers: Vec<_> = (0..PUSHERS)
        .map(|w| {
            let queue = queue.clone();
            thread::spawn(move || {
                let mut c = connect();
                let mut seq = 0usize;
                while seq < PER_PUSHER {
                    // Batches of up to 7 spread over the partitions.
                    let n = 7.min(PER_PUSHER - seq);
                    let items: Vec<Value> = (seq..seq + n)
                        .map(|i| {
                            json!({"queue": queue, "partition": format!("p{}", i % PARTITIONS),
                                        "payload": {"w": w, "i": i}})
                        })
                        .collect();
                    let res = push(&mut c, &Value::Array(items));
                    assert!(res
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|r| r["status"] == "queued"));
                    seq += n;
                }
            })
        })
        .collect();

    let seen: Arc<Mutex<Seen>> = Arc::new(Mutex::new(HashMap::new()));
    let poppers: Vec<_> = (0..POPPERS)
        .map(|k| {
            let queue = queue.clone();
            let seen = Arc::clone(&seen);
            thread::spawn(move || {
                let mut c = connect();
                let group = if k % 2 == 0 { None } else { Some("analytics") };
                let key = group.unwrap_or("queue-mode").to_owned();
                let deadline = Instant::now() + Duration::from_secs(120);
                loop {
                    let done = seen.lock().unwrap().get(&key).map_or(0, |v| v.len()) >= total;
                    if done || Instant::now() > deadline {
                        break;
                    }
                    let popped = pop(&mut c, &queue, group, 10, &json!({"partitions": 2}));
                    let msgs = messages(&popped);
                    if msgs.is_empty() {
                        thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    {
                        let mut s = seen.lock().unwrap();
                        let list = s.entry(key.clone()).or_default();
                        for m in &msgs {
                            list.push((
                                m["partitionId"].as_str().unwrap().to_owned(),
                                m["offset"].as_i64().unwrap(),
                                m["data"].clone(),
                            ));
                        }
                    }
                    let res = ack(&mut c, &acks_for(&popped, "completed", group));
                    for r in res.as_array().unwrap() {
                        assert_eq!(r["success"], true, "{r}");
                    }
                }
            })
        })
        .collect();

    for p in pushers {
        p.join().expect("pusher");
    }
    for p in poppers {
        p.join().expect("popper");
    }
    let seen = seen.lock().unwrap();
    for group in ["queue-mode", "analytics"] {
        let list = &seen[group];
        assert_eq!(list.len(), total, "{group}: every message once");
        let unique: HashSet<(String, i64)> = list.iter().map(|(p, o, _)| (p.clone(), *o)).collect();
        assert_eq!(unique.len(), total, "{group}: no message twice");
        // Per partition, offsets come out ascending, and each pusher's
        // messages come out in the order it pushed them.
        let mut by_partition: BTreeMap<&str, Vec<(i64, &Value)>> = BTreeMap::new();
        for (p, o, d) in list {
            by_partition.entry(p.as_str()).or_default().push((*o, d));
        }
        for (p, msgs) in &by_partition {
            let mut sorted = msgs.clone();
            sorted.sort_by_key(|(o, _)| *o);
            let mut last_i: HashMap<i64, i64> = HashMap::new();
            for (_, d) in &sorted {
                let w = d["w"].as_i64().unwrap();
                let i = d["i"].as_i64().unwrap();
                if let Some(prev) = last_i.insert(w, i) {
                    assert!(i > prev, "{group}/{p}: pusher {w} message {i} after {prev}");
                }
            }
        }
    }
}

/// Producers retrying the same transaction ids at once, into two partitions:
/// each id is stored once per partition, exactly one answer says `queued`,
/// every `duplicate` answer names the stored copy's offset and message id,
/// and acks by those ids complete every stored message.
#[test]
fn racing_pushes_of_the_same_ids_store_each_once() {
    const PUSHERS: usize = 4;
    const PUSHES: usize = 12;
    const IDS: usize = 40;
    let queue = unique("dedup-race");
    let pushers: Vec<_> = (0..PUSHERS)
        .map(|w| {
            let queue = queue.clone();
            thread::spawn(move || {
                let mut c = connect();
                let mut answers = Vec::new();
                for k in 0..PUSHES {
                    // Overlapping windows of 9 ids, each in both partitions,
                    // in an order of the pusher's own.
                    let start = (w * 7 + k * 5) % IDS;
                    let mut items: Vec<Value> = (0..9)
                        .flat_map(|j| {
                            let id = format!("id-{}", (start + j) % IDS);
                            ["a", "b"].map(|p| json!({"queue": queue, "partition": p, "transactionId": id, "payload": {"w": w, "k": k}}))
                        })
                        .collect();
                    if w % 2 == 1 {
                        items.reverse();
                    }
                    let res = push(&mut c, &Value::Array(items.clone()));
                    for (item, r) in items.iter().zip(res.as_array().unwrap()) {
                        answers.push((item["partition"].as_str().unwrap().to_owned(), r.clone()));
                    }
                }
                answers
            })
        })
        .collect();
    let mut stored: HashMap<(String, String), (i64, Value)> = HashMap::new();
    let mut queued: HashMap<(String, String), usize> = HashMap::new();
    let mut answers = Vec::new();
    for p in pushers {
        answers.extend(p.join().expect("pusher"));
    }
    for (partition, r) in &answers {
        let key = (
            partition.clone(),
            r["transactionId"].as_str().unwrap().to_owned(),
        );
        let copy = (r["offset"].as_i64().unwrap(), r["messageId"].clone());
        let first = stored.entry(key.clone()).or_insert_with(|| copy.clone());
        assert_eq!(
            *first, copy,
            "{key:?}: every answer names the same stored copy"
        );
        match r["status"].as_str().unwrap() {
            "queued" => *queued.entry(key).or_default() += 1,
            "duplicate" => {}
            other => panic!("unexpected status {other}"),
        }
    }
    assert!(
        queued.values().all(|n| *n == 1),
        "one queued answer per id and partition: {queued:?}"
    );
    assert_eq!(queued.len(), stored.len());

    // What the log holds is exactly those copies, and the ids ack them.
    let mut c = connect();
    let mut popped_keys = HashSet::new();
    loop {
        let popped = pop(&mut c, &queue, None, 50, &json!({"partitions": 2}));
        let msgs = messages(&popped);
        if msgs.is_empty() {
            break;
        }
        for m in &msgs {
            let key = (
                m["partition"].as_str().unwrap().to_owned(),
                m["transactionId"].as_str().unwrap().to_owned(),
            );
            assert_eq!(
                stored[&key],
                (m["offset"].as_i64().unwrap(), m["id"].clone()),
                "{key:?}"
            );
            assert!(popped_keys.insert(key), "delivered once");
        }
        for r in ack(&mut c, &acks_for(&popped, "completed", None))
            .as_array()
            .unwrap()
        {
            assert_eq!(r["success"], true, "{r}");
        }
    }
    assert_eq!(
        popped_keys.len(),
        stored.len(),
        "every stored copy delivered"
    );
}

/// A batch that is not acknowledged within its lease is handed out again.
#[test]
fn expired_lease_redelivers() {
    let mut c = connect();
    let queue = unique("lease");
    c.query_one(
        "SELECT queen.configure($1, '{\"leaseTime\": 1}')",
        &[&queue],
    )
    .unwrap();
    push(&mut c, &json!([{"queue": queue, "payload": "x"}]));
    let first = pop(&mut c, &queue, None, 1, &json!({}));
    assert_eq!(messages(&first).len(), 1);
    assert!(
        messages(&pop(&mut c, &queue, None, 1, &json!({}))).is_empty(),
        "leased"
    );
    thread::sleep(Duration::from_millis(1300));
    let again = pop(&mut c, &queue, None, 1, &json!({}));
    let m = &messages(&again)[0];
    assert_eq!(m["data"], "x");
    assert_eq!(m["deliveryAttempt"], 2);
    assert_ne!(m["leaseId"], first["leaseId"]);
    // The old holder's late ack is refused; the new holder's is taken.
    let late = ack(&mut c, &acks_for(&first, "completed", None));
    assert_eq!(late[0]["success"], false);
    let ok = ack(&mut c, &acks_for(&again, "completed", None));
    assert_eq!(ok[0]["success"], true);
}

/// An ack that waits for a cursor row another transaction holds works on
/// the row as that transaction left it: two acks of one lease both count,
/// and an ack of a lease that was handed out again meanwhile is refused.
#[test]
fn an_ack_waiting_on_a_cursor_sees_what_its_holder_committed() {
    let mut c = connect();
    let queue = unique("ackwait");
    c.query_one(
        "SELECT queen.configure($1, '{\"leaseTime\": 1}')",
        &[&queue],
    )
    .unwrap();
    push(
        &mut c,
        &json!([{"queue": queue, "payload": 0}, {"queue": queue, "payload": 1}]),
    );
    let popped = pop(&mut c, &queue, None, 2, &json!({}));
    let acks = acks_for(&popped, "completed", None);
    let (first, second) = (json!([acks[0]]), json!([acks[1]]));
    let committed = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT committed FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
               JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0)
    };
    // While an ack of message 0 is open, an ack of message 1 waits; once the
    // first commits, the second sees its state and the cursor passes both.
    let waiting_ack = |body: Value| {
        thread::spawn(move || {
            let mut c2 = connect();
            ack(&mut c2, &body)
        })
    };
    let mut holder = connect();
    let mut txn = holder.transaction().unwrap();
    let r: Value = txn
        .query_one("SELECT queen.ack($1)", &[&first])
        .unwrap()
        .get(0);
    assert_eq!(r[0]["success"], true);
    let waiter = waiting_ack(second);
    thread::sleep(Duration::from_millis(300));
    assert!(
        !waiter.is_finished(),
        "the second ack waits for the cursor row"
    );
    txn.commit().unwrap();
    let r = waiter.join().unwrap();
    assert_eq!(r[0]["success"], true, "{r}");
    assert_eq!(committed(&mut c), 1, "both acks counted");

    // A lease runs out; while the pop that hands the batch out again is
    // open, the old holder's ack waits, then is refused.
    push(&mut c, &json!([{"queue": queue, "payload": 2}]));
    let old = pop(&mut c, &queue, None, 1, &json!({}));
    thread::sleep(Duration::from_millis(1300));
    let mut txn = holder.transaction().unwrap();
    let again: Value = txn
        .query_one("SELECT queen.pop($1, NULL, NULL, 1, '{}')", &[&queue])
        .unwrap()
        .get(0);
    assert_eq!(messages(&again)[0]["data"], 2);
    let waiter = waiting_ack(acks_for(&old, "completed", None));
    thread::sleep(Duration::from_millis(300));
    assert!(
        !waiter.is_finished(),
        "the late ack waits for the cursor row"
    );
    txn.commit().unwrap();
    let r = waiter.join().unwrap();
    assert_eq!(r[0]["success"], false, "{r}");
    assert!(
        r[0]["error"].as_str().unwrap().contains("is not held"),
        "{r}"
    );
    assert_eq!(committed(&mut c), 1);
    let r = ack(&mut c, &acks_for(&again, "completed", None));
    assert_eq!(r[0]["success"], true, "{r}");
    assert_eq!(committed(&mut c), 2);
}

/// The retention cycle's compaction of replaced cursor states passes by a
/// state another transaction holds locked (as a call holds one it was
/// granted after it had been replaced) instead of waiting for it, and
/// deletes it once the holder is gone.
#[test]
fn the_compaction_passes_by_a_state_another_transaction_holds() {
    let mut c = connect();
    let queue = unique("compact");
    let states = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM queen.log_cursor_states s JOIN queen.log_cursors k ON k.id = s.cursor_id
               JOIN queen.log_partitions p ON p.id = k.partition_id JOIN queen.queues q ON q.id = p.queue_id
              WHERE q.name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0)
    };
    for i in 0..4 {
        push(&mut c, &json!([{"queue": queue, "payload": i}]));
    }
    let auto = json!({"autoAck": true});
    assert_eq!(messages(&pop(&mut c, &queue, Some("g"), 1, &auto)).len(), 1);
    // The cursor's first state (seq 0) is replaced now; a transaction holds it.
    let mut holder = connect();
    let mut txn = holder.transaction().unwrap();
    let held = txn
        .query(
            "SELECT 1 FROM queen.log_cursor_states s JOIN queen.log_cursors k ON k.id = s.cursor_id
               JOIN queen.log_partitions p ON p.id = k.partition_id JOIN queen.queues q ON q.id = p.queue_id
              WHERE q.name = $1 AND s.seq = 0 FOR UPDATE OF s",
            &[&queue],
        )
        .unwrap();
    assert_eq!(held.len(), 1);
    for _ in 0..3 {
        assert_eq!(messages(&pop(&mut c, &queue, Some("g"), 1, &auto)).len(), 1);
    }
    let started = Instant::now();
    let report: Value = c
        .query_one("SELECT queen_internal.retention_run_cycle()::jsonb", &[])
        .unwrap()
        .get(0);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the cycle waited for the held state: {:?}",
        started.elapsed()
    );
    assert_eq!(report["failed"], 0, "{report}");
    if report["compaction_deferred"] == false {
        // The held state and the newest are left (this cycle, or a
        // worker's before it, deleted the rest).
        assert_eq!(states(&mut c), 2, "{report}");
    }
    txn.commit().unwrap();
    // Once the holder is gone, a cycle deletes it too.
    let until = Instant::now() + Duration::from_secs(30);
    while states(&mut c) > 1 {
        assert!(
            Instant::now() < until,
            "replaced states left: {}",
            states(&mut c)
        );
        c.query_one("SELECT queen_internal.retention_run_cycle()::jsonb", &[])
            .unwrap();
        thread::sleep(Duration::from_millis(100));
    }
    let rest = pop(&mut c, &queue, Some("g"), 10, &auto);
    assert!(messages(&rest).is_empty(), "{rest}");
}

/// A renewed lease is not handed out when the original one would have run out.
#[test]
fn renewed_lease_holds() {
    let mut c = connect();
    let queue = unique("renew");
    c.query_one(
        "SELECT queen.configure($1, '{\"leaseTime\": 1}')",
        &[&queue],
    )
    .unwrap();
    push(&mut c, &json!([{"queue": queue, "payload": "x"}]));
    let first = pop(&mut c, &queue, None, 1, &json!({}));
    let lease = first["leaseId"].as_str().unwrap().to_owned();
    let r: Value = c
        .query_one("SELECT queen.renew_lease($1, 5)", &[&lease])
        .unwrap()
        .get(0);
    assert_eq!(r["success"], true);
    thread::sleep(Duration::from_millis(1300));
    assert!(messages(&pop(&mut c, &queue, None, 1, &json!({}))).is_empty());
}

/// A failed message waits out its retry delay before it is delivered again.
#[test]
fn retry_delay_is_respected() {
    let mut c = connect();
    let queue = unique("retry");
    c.query_one(
        "SELECT queen.configure($1, '{\"retryDelay\": 800}')",
        &[&queue],
    )
    .unwrap();
    push(&mut c, &json!([{"queue": queue, "payload": 1}]));
    let p = pop(&mut c, &queue, None, 1, &json!({}));
    ack(&mut c, &acks_for(&p, "failed", None));
    assert!(messages(&pop(&mut c, &queue, None, 1, &json!({}))).is_empty());
    thread::sleep(Duration::from_millis(1000));
    assert_eq!(messages(&pop(&mut c, &queue, None, 1, &json!({}))).len(), 1);
}

/// Two claimers: while one pop's transaction holds a partition, another pop
/// of the same group skips it at once instead of waiting.
#[test]
fn second_claimer_skips_without_waiting() {
    let mut a = connect();
    let mut b = connect();
    let queue = unique("claim");
    push(&mut a, &json!([{"queue": queue, "payload": 1}]));
    let mut txn = a.transaction().unwrap();
    let got: Value = txn
        .query_one("SELECT queen.pop($1, NULL, NULL, 1, '{}')", &[&queue])
        .unwrap()
        .get(0);
    assert_eq!(messages(&got).len(), 1);
    b.batch_execute("SET lock_timeout = '2s'").unwrap();
    let started = Instant::now();
    let other = pop(&mut b, &queue, None, 1, &json!({}));
    assert!(messages(&other).is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "a pop never waits on a lock"
    );
    txn.rollback().unwrap();
    // Rolled back: the message was never handed out.
    assert_eq!(messages(&pop(&mut b, &queue, None, 1, &json!({}))).len(), 1);
}

/// A transaction whose ack is refused applies nothing, its pushes included.
#[test]
fn transaction_is_all_or_nothing() {
    let mut c = connect();
    let queue = unique("txn");
    let other = unique("txn-out");
    push(&mut c, &json!([{"queue": queue, "payload": 1}]));
    let p = pop(&mut c, &queue, None, 1, &json!({}));
    let m = &messages(&p)[0];
    let body = json!({"operations": [
        {"type": "push", "items": [{"queue": other, "payload": "side effect"}]},
        {"type": "ack", "transactionId": m["transactionId"], "partitionId": m["partitionId"],
         "leaseId": "00000000-0000-4000-8000-000000000000", "status": "completed"}
    ], "timers": [{"op": "schedule", "queue": other, "timerKey": "side", "payload": "MQ==", "delayMs": 60000}]});
    let err = c
        .query_one("SELECT queen.transaction($1)", &[&body])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "55000", "{err}");
    let pushed: i64 = c
        .query_one("SELECT count(*) FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id WHERE q.name = $1", &[&other])
        .unwrap()
        .get(0);
    assert_eq!(pushed, 0);
    let timers: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_timers WHERE queue = $1",
            &[&other],
        )
        .unwrap()
        .get(0);
    assert_eq!(timers, 0, "the timer rider rolled back with the rest");
    let committed: i64 = c
        .query_one("SELECT c.committed FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1", &[&queue])
        .unwrap()
        .get(0);
    assert_eq!(committed, -1);
}

/// A push racing a queue deletion either lands or fails loudly; nothing is
/// half-written and nothing deadlocks.
#[test]
fn push_racing_delete_fails_loudly_or_lands() {
    let queue = unique("race");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pusher = {
        let queue = queue.clone();
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut c = connect();
            let (mut ok, mut failed) = (0, 0);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match c.query_one("SELECT queen.push($1)", &[&json!([{"queue": queue, "payload": 1}, {"queue": queue, "partition": "b", "payload": 2}])]) {
                    Ok(_) => ok += 1,
                    Err(e) => {
                        let code = sqlstate(&e);
                        // Loud and retryable: the queue or partition went away under the push.
                        assert!(code == "40001" || code == "23503", "unexpected {code}: {e}");
                        failed += 1;
                    }
                }
            }
            (ok, failed)
        })
    };
    let mut c = connect();
    let mut deletes = 0;
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        match c.query_one("SELECT queen.delete_queue($1)", &[&queue]) {
            Ok(_) => deletes += 1,
            Err(e) => assert_eq!(sqlstate(&e), "42704", "{e}"),
        }
        thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (ok, _failed) = pusher.join().expect("pusher");
    assert!(
        ok > 0 && deletes > 0,
        "both sides ran: {ok} pushes, {deletes} deletes"
    );
    // Whatever survived is whole: every segment has its sidecar row.
    let orphans: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
              JOIN queen.queues q ON q.id = p.queue_id
             WHERE q.name = $1 AND NOT EXISTS (SELECT 1 FROM queen.log_txns t WHERE t.partition_id = s.partition_id AND t.base_offset = s.base_offset)",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(orphans, 0);
}

/// A push over partitions its session remembers, while another session
/// deletes their queue: it waits for the delete, then lands in the queue
/// made again under the same name, as a push that remembered nothing would.
#[test]
fn a_push_over_remembered_partitions_follows_a_delete_in_another_session() {
    let queue = unique("known");
    let two = |payload: i64| json!([{"queue": queue, "partition": "a", "payload": payload}, {"queue": queue, "partition": "b", "payload": payload}]);
    // Each message queued at (partition id, offset).
    let landed_at = |answer: &Value, at: &[(i64, i64)]| {
        assert_eq!(answer.as_array().unwrap().len(), at.len(), "{answer}");
        for (a, (pid, offset)) in answer.as_array().unwrap().iter().zip(at) {
            assert_eq!(a["status"], "queued", "{a}");
            assert_eq!(a["partitionId"], json!(pid.to_string()), "{a}");
            assert_eq!(a["offset"], json!(offset), "{a}");
        }
    };
    let mut pusher = connect();
    push(&mut pusher, &two(1));
    push(&mut pusher, &two(2));
    let mut other = connect();
    let old = (
        pid_of(&mut other, &queue, "a"),
        pid_of(&mut other, &queue, "b"),
    );

    // The delete holds the partitions while the push comes.
    let mut t = other.transaction().unwrap();
    t.query_one("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
    let waiting = {
        let body = two(3);
        thread::spawn(move || {
            let answer: Value = pusher
                .query_one("SELECT queen.push($1)", &[&body])
                .unwrap()
                .get(0);
            (pusher, answer)
        })
    };
    thread::sleep(Duration::from_millis(300));
    assert!(!waiting.is_finished(), "the push waits for the delete");
    t.commit().unwrap();
    let (mut pusher, answer) = waiting.join().unwrap();
    let new = (
        pid_of(&mut other, &queue, "a"),
        pid_of(&mut other, &queue, "b"),
    );
    assert!(new.0 != old.0 && new.1 != old.1, "{old:?} {new:?}");
    landed_at(&answer, &[(new.0, 0), (new.1, 0)]);

    // Made again by the other session: the next push finds those.
    other
        .query_one("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
    push(&mut other, &two(4));
    let again = (
        pid_of(&mut other, &queue, "a"),
        pid_of(&mut other, &queue, "b"),
    );
    let answer = push(&mut pusher, &two(5));
    landed_at(&answer, &[(again.0, 1), (again.1, 1)]);
    let popped = pop(&mut other, &queue, None, 10, &json!({}));
    let data: Vec<Value> = messages(&popped)
        .iter()
        .map(|m| m["data"].clone())
        .collect();
    assert_eq!(data, vec![json!(4), json!(5)]);
}

/// Bad input raises an ERROR with a fitting SQLSTATE, names the field, and
/// writes nothing.
#[test]
fn bad_input_is_refused_with_sqlstate() {
    let mut c = connect();
    let queue = unique("bad");
    let long = "x".repeat(70_000);
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "SELECT queen.push($1)",
            json!([{"payload": 1}]),
            "22023",
            "items[0].queue",
        ),
        (
            "SELECT queen.push($1)",
            json!([{"queue": 5, "payload": 1}]),
            "42804",
            "items[0].queue",
        ),
        (
            "SELECT queen.push($1)",
            json!([{"queue": long, "payload": 1}]),
            "22001",
            "items[0].queue",
        ),
        (
            "SELECT queen.push($1)",
            json!([{"queue": queue, "payload": 1, "traceId": "nope"}]),
            "22P02",
            "items[0].traceId",
        ),
        ("SELECT queen.push($1)", json!([]), "22023", "items"),
        ("SELECT queen.push($1)", json!("text"), "42804", "items"),
        (
            "SELECT queen.ack($1)",
            json!({"transactionId": "t", "partitionId": 1, "status": "nah"}),
            "22023",
            "status",
        ),
        (
            "SELECT queen.ack($1)",
            json!({"transactionId": "t", "partitionId": "abc"}),
            "22023",
            "partitionId",
        ),
        (
            "SELECT queen.ack($1)",
            json!({"transactionId": "t", "partitionId": 1, "leaseId": "zzz"}),
            "22P02",
            "leaseId",
        ),
        (
            "SELECT queen.transaction($1)",
            json!({"operations": [{"type": "teleport"}]}),
            "22023",
            "operations[0].type",
        ),
    ];
    for (sql, arg, code, field) in cases {
        let err = c.query_one(sql, &[&arg]).unwrap_err();
        assert_eq!(sqlstate(&err), code, "{sql} {arg}: {err}");
        let msg = err.as_db_error().unwrap().message().to_owned();
        assert!(msg.contains(field), "{msg:?} names {field}");
    }
    let err = c
        .query_one("SELECT queen.pop($1, NULL, NULL, 0, '{}')", &[&queue])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22023");
    let err = c
        .query_one("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "42704");
    let err = c
        .query_one(
            "SELECT queen.configure($1, '{\"leaseTime\": \"x\"}')",
            &[&queue],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&err), "42804");
    let err = c
        .query_one("SELECT queen.configure($1, '{\"colour\": 1}')", &[&queue])
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22023");
    let err = c
        .query_one(
            "SELECT queen.push_binary($1)",
            &[&b"QPB1\x00\xff\xff\xff\xff".to_vec()],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&err), "22P03");
    // Nothing was written by any of them.
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.queues WHERE name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
}

#[test]
fn push_text_takes_the_json_body_as_text() {
    let mut c = connect();
    let queue = unique("text");
    let body = json!([{"queue": queue, "partition": "p", "payload": {"n": 1, "s": "caf\u{e9} \"q\""}, "transactionId": "t-1"},
                      {"queue": queue, "partition": "p", "payload": [1, 2]}]);
    let answer: Value = c
        .query_one("SELECT queen.push_text($1)::jsonb", &[&body.to_string()])
        .unwrap()
        .get(0);
    assert_eq!(answer.as_array().unwrap().len(), 2);
    assert_eq!(answer[0]["status"], "queued");
    assert_eq!(answer[0]["transactionId"], "t-1");
    let again: Value = c
        .query_one("SELECT queen.push_text($1)::jsonb", &[&body.to_string()])
        .unwrap()
        .get(0);
    assert_eq!(
        again[0]["status"], "duplicate",
        "dedup is the same as push's"
    );
    let popped = pop(&mut c, &queue, None, 10, &json!({}));
    let data: Vec<Value> = messages(&popped)
        .iter()
        .map(|m| m["data"].clone())
        .collect();
    assert_eq!(data[0], json!({"n": 1, "s": "caf\u{e9} \"q\""}));
    assert_eq!(data[1], json!([1, 2]));
    for (bad, state) in [
        ("[{\"queue\": ", "22023"),
        ("{\"items\": 7}", "22023"),
        ("[{\"queue\": 5}]", "42804"),
        ("\"x\"", "42804"),
    ] {
        let err = c
            .query_one("SELECT queen.push_text($1)", &[&bad])
            .unwrap_err();
        assert_eq!(sqlstate(&err), state, "{bad}: {err}");
    }
}

/// A transaction whose only write is a pop's lease commits without waiting
/// for the WAL flush (the server says so at DEBUG1). One that writes anything
/// else, before the pop or after it, one whose pop auto-acks or takes
/// nothing, one rolled back, and every pop with `queen.pop_async_commit` off
/// commit as usual; the session's `synchronous_commit` is left as it was, and
/// the lease of a relaxed commit holds and is acked like any other.
#[test]
fn only_a_lease_only_commit_skips_the_wal_flush() {
    let (mut c, notices, table) = noticed_session();
    let queue = unique("leasecommit");
    let items: Vec<Value> = (0..8)
        .map(|i| json!({"queue": queue, "partition": format!("p{i}"), "payload": i}))
        .collect();
    push(&mut c, &Value::Array(items));
    let pop_sql =
        |options: &str| format!("SELECT queen.pop('{queue}', NULL, NULL, 1, '{options}')");
    let relaxed =
        |c: &mut postgres::Client, sql: &str| says(c, &notices, sql, "lease-only transaction");

    assert!(relaxed(&mut c, &pop_sql("{}")), "a pop alone");
    assert_eq!(
        c.query_one("SHOW synchronous_commit", &[])
            .unwrap()
            .get::<_, String>(0),
        "on"
    );
    c.batch_execute("SET synchronous_commit = remote_write")
        .unwrap();
    assert!(
        relaxed(&mut c, &format!("BEGIN; {}; COMMIT", pop_sql("{}"))),
        "a pop alone, in a block"
    );
    assert_eq!(
        c.query_one("SHOW synchronous_commit", &[])
            .unwrap()
            .get::<_, String>(0),
        "remote_write"
    );
    c.batch_execute("RESET synchronous_commit").unwrap();

    assert!(
        !relaxed(
            &mut c,
            &format!(
                "BEGIN; INSERT INTO {table} VALUES (1); {}; COMMIT",
                pop_sql("{}")
            )
        ),
        "written before"
    );
    assert!(
        !relaxed(
            &mut c,
            &format!(
                "BEGIN; {}; INSERT INTO {table} VALUES (2); COMMIT",
                pop_sql("{}")
            )
        ),
        "written after"
    );
    assert!(
        !relaxed(&mut c, &pop_sql(r#"{"autoAck": true}"#)),
        "auto-ack"
    );
    assert!(
        !relaxed(&mut c, &format!("BEGIN; {}; ROLLBACK", pop_sql("{}"))),
        "rolled back"
    );
    c.batch_execute("SET queen.pop_async_commit = off").unwrap();
    assert!(!relaxed(&mut c, &pop_sql("{}")), "turned off");
    c.batch_execute("RESET queen.pop_async_commit").unwrap();
    let n: i64 = c
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2, "both user rows committed");

    // Partitions left: p7 and the one the rolled-back pop gave back.
    let held = pop(&mut c, &queue, None, 1, &json!({}));
    assert_eq!(messages(&held).len(), 1);
    let mut other = connect();
    let last = pop(&mut other, &queue, None, 1, &json!({}));
    assert_eq!(messages(&last).len(), 1);
    assert_ne!(
        messages(&held)[0]["partitionId"],
        messages(&last)[0]["partitionId"]
    );
    assert!(
        messages(&pop(&mut other, &queue, None, 1, &json!({}))).is_empty(),
        "every lease holds"
    );
    assert!(!relaxed(&mut c, &pop_sql("{}")), "nothing left to take");
    let done = ack(&mut other, &acks_for(&held, "completed", None));
    assert_eq!(done[0]["success"], true, "{done}");
    c.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}

/// A transaction whose only writes are one ack call's commits without
/// waiting for the WAL flush, as a lease-only one does. One that writes
/// anything else, before the ack or after it, one rolled back, and every
/// ack with `queen.ack_async_commit` off commit as usual. What a relaxed ack
/// did holds: its messages are not delivered again, and the next ones are.
#[test]
fn only_an_ack_only_commit_skips_the_wal_flush() {
    let (mut c, notices, table) = noticed_session();
    let queue = unique("ackcommit");
    let items: Vec<Value> = (0..12)
        .map(|i| json!({"queue": queue, "payload": i}))
        .collect();
    push(&mut c, &Value::Array(items));
    let relaxed =
        |c: &mut postgres::Client, sql: &str| says(c, &notices, sql, "ack-only transaction");
    // Each case acks the next message; its SQL text quoted for a block.
    let next_ack = |c: &mut postgres::Client| -> String {
        let popped = pop(c, &queue, None, 1, &json!({}));
        assert_eq!(messages(&popped).len(), 1, "{popped}");
        format!(
            "SELECT queen.ack('{}')",
            acks_for(&popped, "completed", None)
                .to_string()
                .replace('\'', "''")
        )
    };

    let sql = next_ack(&mut c);
    assert!(relaxed(&mut c, &sql), "an ack alone");
    assert_eq!(
        c.query_one("SHOW synchronous_commit", &[])
            .unwrap()
            .get::<_, String>(0),
        "on"
    );
    let sql = next_ack(&mut c);
    assert!(
        relaxed(&mut c, &format!("BEGIN; {sql}; COMMIT")),
        "an ack alone, in a block"
    );
    let sql = next_ack(&mut c);
    assert!(
        !relaxed(
            &mut c,
            &format!("BEGIN; INSERT INTO {table} VALUES (1); {sql}; COMMIT")
        ),
        "written before"
    );
    let sql = next_ack(&mut c);
    assert!(
        !relaxed(
            &mut c,
            &format!("BEGIN; {sql}; INSERT INTO {table} VALUES (2); COMMIT")
        ),
        "written after"
    );
    let sql = next_ack(&mut c);
    assert!(
        !relaxed(&mut c, &format!("BEGIN; {sql}; ROLLBACK")),
        "rolled back"
    );
    // The rolled-back ack left its lease in place: acked again, for good.
    assert!(relaxed(&mut c, &sql), "the same ack, again");
    c.batch_execute("SET queen.ack_async_commit = off").unwrap();
    let sql = next_ack(&mut c);
    assert!(!relaxed(&mut c, &sql), "turned off");
    c.batch_execute("RESET queen.ack_async_commit").unwrap();
    let n: i64 = c
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2, "both user rows committed");

    // Six messages acked, in order: the next delivery is the seventh.
    let mut other = connect();
    let rest = pop(&mut other, &queue, None, 10, &json!({}));
    let data: Vec<Value> = messages(&rest).iter().map(|m| m["data"].clone()).collect();
    assert_eq!(data, (6..12).map(|i| json!(i)).collect::<Vec<_>>());
    c.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}

/// The transaction id the current transaction holds, if any.
fn xid(t: &mut postgres::Transaction<'_>) -> Option<String> {
    t.query_one("SELECT pg_current_xact_id_if_assigned()::text", &[])
        .unwrap()
        .get(0)
}

/// A call that writes nothing (a pop that finds no message, the queue
/// version a long poll checks, a status or a listing) takes no transaction
/// id, so its commit writes no WAL; a push takes one.
#[test]
fn a_call_that_writes_nothing_takes_no_transaction_id() {
    let mut c = connect();
    let queue = unique("noxid");
    push(&mut c, &json!([{"queue": queue, "payload": 1}]));
    let taken = pop(&mut c, &queue, None, 10, &json!({"autoAck": true}));
    assert_eq!(messages(&taken).len(), 1);
    let mut t = c.transaction().unwrap();
    let empty: Value = t
        .query_one(
            "SELECT queen.pop($1, NULL, NULL, 1, '{}')::jsonb",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(empty["messages"], json!([]), "{empty}");
    assert_eq!(xid(&mut t), None, "an empty pop took a transaction id");
    for read in [
        "SELECT queen.queue_version($1)::text",
        "SELECT queen.status_queue($1)::text",
        "SELECT queen.dlq_messages(jsonb_build_object('queue', $1::text))::text",
        "SELECT queen.messages_list(jsonb_build_object('queue', $1::text))::text",
    ] {
        t.query_one(read, &[&queue]).unwrap();
        assert_eq!(xid(&mut t), None, "{read} took a transaction id");
    }
    t.query_one(
        "SELECT queen.push($1)",
        &[&json!([{"queue": queue, "payload": 2}])],
    )
    .unwrap();
    assert!(
        xid(&mut t).is_some(),
        "a push wrote without a transaction id"
    );
    t.commit().unwrap();
}

/// A push, a read by offset and a group's positions naming 16 partitions of
/// a queue of thousands, among thousands of queues, read those 16 and their
/// queue: not every queue, nor the queue's every partition once per name
/// (plans the planner took for cheap: a push into a queue of 10 000
/// partitions ran twenty times slower than into one of 16).
#[test]
fn a_call_naming_partitions_reads_those_not_the_whole_queue() {
    const IDLE: usize = 3_000;
    const CATALOG: &[&str] = &["queen.queues", "queen.log_partitions"];
    let mut c = connect();
    let queue = unique("wide");
    let small = unique("small");
    let items: Vec<Value> = (0..IDLE)
        .map(|q| json!({"queue": format!("{small}-{q}"), "payload": q}))
        .collect();
    push(&mut c, &Value::Array(items));
    fill_partitions(&mut c, &queue, "idle-", IDLE);
    let named: Vec<String> = (0..16).map(|p| format!("p{p}")).collect();
    let items: Vec<Value> = named
        .iter()
        .map(|p| json!({"queue": queue, "partition": p, "payload": 0}))
        .collect();
    push(&mut c, &Value::Array(items.clone()));
    c.batch_execute("ANALYZE queen.log_partitions").unwrap();
    let entries: Vec<Value> = named
        .iter()
        .map(|p| json!({"queue": queue, "partition": p, "offset": 0}))
        .collect();
    let calls = [
        ("a push", "SELECT queen.push($1)::text", Value::Array(items)),
        (
            "a fetch",
            "SELECT queen.fetch($1)::text",
            json!({"entries": entries}),
        ),
        (
            "a group's positions",
            "SELECT queen.consumer_group_positions($1)::text",
            json!({"consumerGroup": "g", "entries": entries}),
        ),
    ];
    for (what, sql, arg) in calls {
        let mut t = c.transaction().unwrap();
        let before = rows_read(&mut t, CATALOG);
        t.query_one(sql, &[&arg]).unwrap();
        let read = rows_read(&mut t, CATALOG) - before;
        assert!(
            read <= 6 * 16,
            "{what} naming 16 of {IDLE} partitions read {read} queue and partition rows"
        );
        t.rollback().unwrap();
    }
    c.execute(
        "SELECT queen.delete_queue(name) FROM queen.queues WHERE name = $1 OR name LIKE $2",
        &[&queue, &format!("{small}-%")],
    )
    .unwrap();
    // Their pushes took thousands of the metrics counters' shared entries,
    // and the queues counted after them would find none: a take frees the
    // entries that counted nothing since the take before.
    for _ in 0..2 {
        c.execute("SELECT queen_internal.metrics_sample()", &[])
            .unwrap();
    }
}

/// One pop of one message by `group`, from `queue` or from the queues
/// `options` name, in `t`; and the rows of `tables` it read.
fn pop_reading(
    t: &mut postgres::Transaction<'_>,
    queue: Option<&str>,
    group: &str,
    options: &Value,
    tables: &[&str],
) -> (Value, i64) {
    let before = rows_read(t, tables);
    let popped: Value = t
        .query_one(
            "SELECT queen.pop($1, NULL, $2, 1, $3)",
            &[&queue, &group, options],
        )
        .unwrap()
        .get(0);
    (popped, rows_read(t, tables) - before)
}

/// A pop on a queue of many partitions that all hold messages reads a
/// window of them, not the whole queue: its candidate scan stops once it
/// has found its candidates, for a group that read the queue before and for
/// one that never did.
#[test]
fn a_pop_reads_a_window_of_partitions_not_the_whole_queue() {
    const PARTITIONS: usize = 3_000;
    const TABLES: &[&str] = &["queen.log_partitions", "queen.log_cursors"];
    let mut c = connect();
    let queue = unique("many");
    for chunk in (0..PARTITIONS).collect::<Vec<_>>().chunks(500) {
        let items: Vec<Value> = chunk
            .iter()
            .flat_map(|p| {
                let queue = &queue;
                (0..2).map(
                    move |k| json!({"queue": queue, "partition": format!("p{p}"), "payload": k}),
                )
            })
            .collect();
        push(&mut c, &Value::Array(items));
    }
    c.batch_execute("ANALYZE queen.log_partitions, queen.log_cursors, queen.log_cursor_states")
        .unwrap();
    let auto = json!({"autoAck": true});
    for _ in 0..20 {
        assert_eq!(
            messages(&pop(&mut c, &queue, Some("read"), 1, &auto)).len(),
            1
        );
    }
    for group in ["read", "new"] {
        let mut t = c.transaction().unwrap();
        let (popped, read) = pop_reading(&mut t, Some(&queue), group, &auto, TABLES);
        assert_eq!(messages(&popped).len(), 1, "group {group}");
        assert!(
            read <= 100,
            "a pop of one message by group {group} from {PARTITIONS} partitions read {read} \
             partition and cursor rows"
        );
        t.rollback().unwrap();
    }
    c.execute("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
}

/// Pops of one partition each from a queue whose partitions all hold
/// messages reach every partition in turn: each scan starts where the last
/// one stopped, so no partition waits while others are served again and
/// again.
#[test]
fn pops_in_turn_reach_every_partition() {
    const PARTITIONS: usize = 200;
    let mut c = connect();
    let queue = unique("turns");
    let items: Vec<Value> = (0..PARTITIONS)
        .flat_map(|p| {
            let queue = &queue;
            (0..5).map(move |k| json!({"queue": queue, "partition": format!("p{p}"), "payload": k}))
        })
        .collect();
    push(&mut c, &Value::Array(items));
    let auto = json!({"autoAck": true});
    let mut served: HashMap<String, usize> = HashMap::new();
    let mut pops = 0;
    while served.len() < PARTITIONS && pops < 2 * PARTITIONS {
        let popped = pop(&mut c, &queue, Some("g"), 1, &auto);
        let got = messages(&popped);
        assert_eq!(got.len(), 1, "pop {pops}: {popped}");
        *served
            .entry(got[0]["partition"].as_str().unwrap().to_owned())
            .or_default() += 1;
        pops += 1;
    }
    assert_eq!(
        served.len(),
        PARTITIONS,
        "{pops} pops of one message reached {} of {PARTITIONS} partitions",
        served.len()
    );
    c.execute("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
}

/// A pop finds the one partition that holds messages for its group in a
/// queue of many more partitions than its candidate window reads: a window
/// that finds none has the pop look at every partition.
#[test]
fn a_pop_finds_messages_past_its_window() {
    const PARTITIONS: usize = 600;
    let mut c = connect();
    let queue = unique("far");
    let items: Vec<Value> = (0..PARTITIONS)
        .map(|p| json!({"queue": queue, "partition": format!("p{p:03}"), "payload": p}))
        .collect();
    push(&mut c, &Value::Array(items));
    seek_to_end(&mut c, &queue, "g");
    let auto = json!({"autoAck": true});
    let popped = pop(&mut c, &queue, Some("g"), 1, &auto);
    assert!(messages(&popped).is_empty(), "{popped}");
    push(
        &mut c,
        &json!([{"queue": queue, "partition": "p599", "payload": "last"}]),
    );
    let popped = pop(&mut c, &queue, Some("g"), 1, &auto);
    let got = messages(&popped);
    assert_eq!(got.len(), 1, "{popped}");
    assert_eq!(got[0]["partition"], "p599");
    assert_eq!(got[0]["data"], "last");
    c.execute("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
}

/// A pop of a namespace takes from each of its queues that holds messages
/// for the group, a queue whose window finds none among them: one queue
/// with a message in its only partition, and one whose only message lies
/// past its window.
#[test]
fn a_namespace_pop_finds_messages_past_a_queues_window() {
    const PARTITIONS: usize = 600;
    let mut c = connect();
    let ns = unique("ns");
    let (near, far) = (unique("near"), unique("far"));
    for q in [&near, &far] {
        c.query_one(
            "SELECT queen.configure($1, $2)",
            &[q, &json!({"namespace": ns})],
        )
        .unwrap();
    }
    let items: Vec<Value> = (0..PARTITIONS)
        .map(|p| json!({"queue": far, "partition": format!("p{p:03}"), "payload": p}))
        .collect();
    push(&mut c, &Value::Array(items));
    seek_to_end(&mut c, &far, "g");
    push(
        &mut c,
        &json!([{"queue": near, "payload": "near"},
                {"queue": far, "partition": "p599", "payload": "far"}]),
    );
    let popped: Value = c
        .query_one(
            "SELECT queen.pop(NULL, NULL, 'g', 10, $1)",
            &[&json!({"namespace": ns, "partitions": 2, "autoAck": true})],
        )
        .unwrap()
        .get(0);
    let mut got: Vec<String> = messages(&popped)
        .iter()
        .map(|m| m["data"].as_str().unwrap_or_default().to_owned())
        .collect();
    got.sort();
    assert_eq!(got, ["far", "near"], "{popped}");
    for q in [&near, &far] {
        c.execute("SELECT queen.delete_queue($1)", &[q]).unwrap();
    }
}

/// A backend keeps its heap from one call to the next
/// (`queen.malloc_keep_bytes`, default 8 MB): a push of 1000 messages,
/// their pop and their ack take a few page faults. With the setting at 0
/// the backend gives its heap back after each call and faults it in again
/// (about 950 faults a round when this test was written, against 17).
#[test]
fn a_backend_keeps_its_heap_between_calls() {
    let mut c = connect();
    let queue = unique("heap");
    let items = notes(&queue, 1000);
    assert_heap_kept(
        &mut c,
        "queen.malloc_keep_bytes",
        100.0,
        "push, pop and ack of 1000",
        |c| {
            push(c, &items);
            let popped = pop(c, &queue, None, 1000, &json!({}));
            assert_eq!(messages(&popped).len(), 1000, "{popped}");
            ack(c, &acks_for(&popped, "completed", None));
        },
    );
}

/// Pops on a queue of many partitions of which few hold messages for the
/// group: a pop whose window finds none reads the whole queue, and the next
/// pops try what that read found, in turn, before reading the whole queue
/// again. Every message is delivered once, in its partition's order, and
/// the busy partitions take turns.
#[test]
fn a_sparse_queue_is_read_whole_once_for_many_pops() {
    sparse_pops(false);
}

/// As [`a_sparse_queue_is_read_whole_once_for_many_pops`], popped by the
/// queue's namespace: the hints of a queue serve the pops of its namespace.
#[test]
fn a_sparse_queue_is_read_whole_once_for_many_pops_of_its_namespace() {
    sparse_pops(true);
}

/// A pop whose window finds nothing reads its whole queue, and that read
/// costs the queue's partitions, not the cursors its group holds on other
/// queues: an empty pop of a queue of 300 partitions, by a group with 6 000
/// cursors on another queue, reads the cursors of the first alone. (Planned
/// freely, a kept plan could hash the group's cursors, found by reading the
/// cursor table's whole key.)
#[test]
fn a_whole_queue_read_costs_its_partitions_not_the_groups_cursors_elsewhere() {
    const ELSEWHERE: usize = 6_000;
    const PARTITIONS: usize = 300;
    let mut c = connect();
    let (elsewhere, dry, group) = (unique("elsewhere"), unique("dry"), unique("g"));
    for (queue, n) in [(&elsewhere, ELSEWHERE), (&dry, PARTITIONS)] {
        fill_partitions(&mut c, queue, "p", n);
        seek_to_end(&mut c, queue, &group);
    }
    c.batch_execute("ANALYZE queen.log_partitions, queen.log_cursors, queen.log_cursor_states")
        .unwrap();
    let mut t = c.transaction().unwrap();
    let auto = json!({"autoAck": true});
    let (popped, read) = pop_reading(&mut t, Some(&dry), &group, &auto, &["queen.log_cursors"]);
    t.commit().unwrap();
    assert!(messages(&popped).is_empty(), "{popped}");
    // The window's probes, then the survey of the queue and the whole read
    // of what it did not find done: two per partition at most.
    assert!(
        read <= 2 * PARTITIONS as i64,
        "an empty pop of {PARTITIONS} partitions read {read} cursors"
    );
    for q in [&elsewhere, &dry] {
        c.execute("SELECT queen.delete_queue($1)", &[q]).unwrap();
    }
}

/// Pops of one message each, by the queue's name or by its namespace, on a
/// queue of 3,000 partitions of which 8 hold 3 messages each for the group.
fn sparse_pops(by_namespace: bool) {
    const PARTITIONS: usize = 3_000;
    const BUSY: usize = 8;
    const EACH: usize = 3;
    const TABLES: &[&str] = &["queen.log_partitions", "queen.log_cursors"];
    let mut c = connect();
    let queue = unique("sparse");
    let ns = unique("sparse-ns");
    c.query_one(
        "SELECT queen.configure($1, $2)",
        &[&queue, &json!({"namespace": ns})],
    )
    .unwrap();
    fill_partitions(&mut c, &queue, "p", PARTITIONS);
    seek_to_end(&mut c, &queue, "g");
    let busy: Vec<String> = (0..BUSY)
        .map(|k| format!("p{}", 100 + k * (PARTITIONS / BUSY)))
        .collect();
    let items: Vec<Value> = busy
        .iter()
        .flat_map(|p| (0..EACH).map(move |k| (p.clone(), k)))
        .map(|(p, k)| json!({"queue": queue, "partition": p, "payload": k}))
        .collect();
    push(&mut c, &Value::Array(items));
    c.batch_execute("ANALYZE queen.log_partitions, queen.log_cursors, queen.log_cursor_states")
        .unwrap();

    let (name, options) = if by_namespace {
        (None, json!({"autoAck": true, "namespace": ns}))
    } else {
        (Some(queue.as_str()), json!({"autoAck": true}))
    };
    let mut got: HashMap<String, Vec<i64>> = HashMap::new();
    let mut whole_reads = 0;
    for n in 0..BUSY * EACH {
        if n == 2 * BUSY {
            // The busy partitions take turns: none waits while another is
            // served again and again.
            assert_eq!(got.len(), BUSY, "partitions served in {n} pops: {got:?}");
        }
        let mut t = c.transaction().unwrap();
        let (popped, read) = pop_reading(&mut t, name, "g", &options, TABLES);
        if read > PARTITIONS as i64 {
            whole_reads += 1;
        }
        t.commit().unwrap();
        let m = messages(&popped);
        assert_eq!(m.len(), 1, "{popped}");
        got.entry(m[0]["partition"].as_str().unwrap().to_owned())
            .or_default()
            .push(m[0]["data"].as_i64().unwrap());
    }
    let mut partitions: Vec<&String> = got.keys().collect();
    partitions.sort();
    let mut expected: Vec<&String> = busy.iter().collect();
    expected.sort();
    assert_eq!(partitions, expected);
    for (p, payloads) in &got {
        assert_eq!(payloads, &(0..EACH as i64).collect::<Vec<_>>(), "{p}");
    }
    assert!(messages(&pop(
        &mut c,
        &queue,
        Some("g"),
        1,
        &json!({"autoAck": true})
    ))
    .is_empty());
    // Without what the whole reads found, 23 of the 24 pops read the whole
    // queue when this test was written (the windows start where the last
    // candidate was found, and found none); with it, 1.
    assert!(
        whole_reads <= BUSY * EACH / 4,
        "{whole_reads} of {} pops read the whole queue",
        BUSY * EACH
    );
    c.execute("SELECT queen.delete_queue($1)", &[&queue])
        .unwrap();
}

/// Pops of one message with autoAck for `group` until one finds nothing
/// (at most `most`): their payloads.
fn drain_auto(c: &mut postgres::Client, queue: &str, group: &str, most: usize) -> Vec<Value> {
    let mut got = Vec::new();
    for _ in 0..most {
        let popped = pop(c, queue, Some(group), 1, &json!({"autoAck": true}));
        let more = messages(&popped);
        if more.is_empty() {
            break;
        }
        got.extend(more.into_iter().map(|m| m["data"].clone()));
    }
    got
}

/// A queue of 48 partitions of one message each, read in windows of 16 by
/// `c`: a pop that finds it sparse keeps which partitions its group has
/// done and passes them by. What another session does is seen by the next
/// pop all the same: a push to a done partition, a seek back, a group
/// deleted and made again; and a memo made in a transaction that is rolled
/// back goes with it.
#[test]
fn the_memo_of_done_partitions_hides_nothing_from_the_next_pop() {
    const PARTITIONS: usize = 48;
    let queue = unique("memo");
    let mut a = connect();
    let mut b = connect();
    a.batch_execute("SET queen.pop_scan_window = 16").unwrap();
    fill_partitions(&mut b, &queue, "p", PARTITIONS);

    // Read in a transaction that is rolled back: all comes back.
    a.batch_execute("BEGIN").unwrap();
    assert_eq!(
        drain_auto(&mut a, &queue, "g", PARTITIONS + 5).len(),
        PARTITIONS
    );
    a.batch_execute("ROLLBACK").unwrap();
    assert_eq!(
        drain_auto(&mut a, &queue, "g", PARTITIONS + 5).len(),
        PARTITIONS
    );
    assert!(drain_auto(&mut a, &queue, "g", 3).is_empty());

    // Another session's push to a done partition.
    push(
        &mut b,
        &json!([{"queue": queue, "partition": "p17", "payload": "late"}]),
    );
    assert_eq!(drain_auto(&mut a, &queue, "g", 5), [json!("late")]);

    // Another session's seek back.
    b.query_one(
        "SELECT queen.consumer_group_seek_queue('g', $1, '{\"position\": \"beginning\"}')",
        &[&queue],
    )
    .unwrap();
    assert_eq!(
        drain_auto(&mut a, &queue, "g", PARTITIONS + 5).len(),
        PARTITIONS + 1
    );

    // Another session deletes the group; it is made again from the start.
    b.query_one(
        "SELECT queen.consumer_group_delete('g', $1, true)",
        &[&queue],
    )
    .unwrap();
    assert_eq!(
        drain_auto(&mut a, &queue, "g", PARTITIONS + 5).len(),
        PARTITIONS + 1
    );
}
