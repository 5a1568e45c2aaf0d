//! KV and locks over real connections: races between writers, expiry that
//! hides a row before the prune removes it, quota refusal that writes
//! nothing, the KV rider of a transaction, and a lock-order soak where
//! transactions over kv + timers + pushes + acks race the sweepers and
//! retention steps and no deadlock is ever reported.

use std::collections::BTreeSet;
use std::thread;
use std::time::{Duration, Instant};

use queen_it::*;
use serde_json::{json, Value};

fn kv(c: &mut postgres::Client, ops: Value) -> Value {
    c.query_one(
        "SELECT queen.kv($1)::jsonb",
        &[&json!({ "operations": ops })],
    )
    .expect("kv")
    .get(0)
}

fn kv1(c: &mut postgres::Client, op: Value) -> Value {
    kv(c, json!([op]))["results"][0].clone()
}

fn locks(c: &mut postgres::Client, op: Value) -> Value {
    c.query_one(
        "SELECT queen.locks($1)::jsonb",
        &[&json!({ "operations": [op] })],
    )
    .expect("locks")
    .get::<_, Value>(0)["results"][0]
        .clone()
}

fn rows_in(c: &mut postgres::Client, ns: &str) -> i64 {
    c.query_one("SELECT count(*) FROM queen.kv WHERE ns = $1", &[&ns])
        .unwrap()
        .get(0)
}

#[test]
fn exactly_one_of_many_racing_put_if_absent_wins() {
    let ns = unique("race");
    for round in 0..10 {
        let winners: Vec<bool> = (0..4)
            .map(|t| {
                let ns = ns.clone();
                thread::spawn(move || {
                    let mut c = connect();
                    let r = kv1(&mut c, json!({"op": "putIfAbsent", "ns": ns, "key": format!("k{round}"), "value": t, "ttlSeconds": 60}));
                    r["applied"] == true
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        assert_eq!(
            winners.iter().filter(|w| **w).count(),
            1,
            "round {round}: {winners:?}"
        );
    }
}

#[test]
fn concurrent_increments_are_never_lost() {
    let ns = unique("incr");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let ns = ns.clone();
            thread::spawn(move || {
                let mut c = connect();
                for _ in 0..50 {
                    let r = kv1(
                        &mut c,
                        json!({"op": "incr", "ns": ns, "key": "n", "delta": 2, "ttlSeconds": 600}),
                    );
                    assert_eq!(r["applied"], true);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut c = connect();
    assert_eq!(
        kv1(&mut c, json!({"op": "get", "ns": ns, "key": "n"}))["value"],
        400
    );
}

#[test]
fn a_fenced_writer_loses_to_the_one_that_moved_the_version() {
    let mut c = connect();
    let ns = unique("cas");
    let v1 = kv1(
        &mut c,
        json!({"op": "put", "ns": ns, "key": "k", "value": "a", "forever": true}),
    )["version"]
        .as_i64()
        .unwrap();
    let v2 = kv1(
        &mut c,
        json!({"op": "put", "ns": ns, "key": "k", "value": "b", "forever": true, "expect": v1}),
    );
    assert_eq!(v2["applied"], true);
    let stale = kv1(
        &mut c,
        json!({"op": "put", "ns": ns, "key": "k", "value": "c", "forever": true, "expect": v1}),
    );
    assert_eq!(
        (
            stale["applied"].clone(),
            stale["reason"].clone(),
            stale["value"].clone()
        ),
        (json!(false), json!("version"), json!("b"))
    );
    let absent = kv1(
        &mut c,
        json!({"op": "put", "ns": ns, "key": "new", "value": 1, "ttlSeconds": 5, "expect": 3}),
    );
    assert_eq!(absent["reason"], "absent");
    assert_eq!(
        rows_in(&mut c, &ns),
        1,
        "a failed fenced write creates nothing"
    );
    // SQL conveniences over the same ops.
    let r: Value = c
        .query_one(
            "SELECT queen.kv_cas($1, 'k', $2, '\"d\"', NULL, true)::jsonb",
            &[&ns, &v2["version"].as_i64().unwrap()],
        )
        .unwrap()
        .get(0);
    assert_eq!(r["applied"], true);
    let got: Option<Value> = c
        .query_one("SELECT queen.kv_get($1, 'k')::jsonb", &[&ns])
        .unwrap()
        .get(0);
    assert_eq!(got, Some(json!("d")));
    let err = c
        .query_one("SELECT queen.kv_set($1, 'x', '1', NULL)", &[&ns])
        .unwrap_err();
    assert_eq!(
        sqlstate(&err),
        "22023",
        "a write with no declared expiry is refused: {err}"
    );
}

#[test]
fn an_expired_key_is_invisible_from_its_instant_though_its_row_is_present() {
    let mut c = connect();
    let ns = unique("expiry");
    kv1(
        &mut c,
        json!({"op": "put", "ns": ns, "key": "k", "value": 1, "ttlSeconds": 1}),
    );
    let at: String = c
        .query_one("SELECT to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') FROM queen.kv WHERE ns = $1", &[&ns])
        .unwrap()
        .get(0);
    assert_eq!(
        kv1(&mut c, json!({"op": "get", "ns": ns, "key": "k"}))["expiresAt"],
        json!(at)
    );
    // Hold the row so no sweeper can prune it, then read past its instant.
    let mut holder = connect();
    let mut h = holder.transaction().unwrap();
    h.execute("SELECT 1 FROM queen.kv WHERE ns = $1 FOR SHARE", &[&ns])
        .unwrap();
    thread::sleep(Duration::from_millis(1100));
    let r = kv1(&mut c, json!({"op": "get", "ns": ns, "key": "k"}));
    assert_eq!(r["found"], false, "{r}");
    let live: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.kv_live_v1 WHERE ns = $1",
            &[&ns],
        )
        .unwrap()
        .get(0);
    assert_eq!(live, 0);
    assert_eq!(rows_in(&mut c, &ns), 1, "the row is still there");
    let present: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.kv WHERE ns = $1 AND expires_at <= now()",
            &[&ns],
        )
        .unwrap()
        .get(0);
    assert_eq!(present, 1);
    // expect 0 wins against the expired row.
    h.rollback().unwrap();
    let again = kv1(
        &mut c,
        json!({"op": "putIfAbsent", "ns": ns, "key": "k", "value": 2, "ttlSeconds": 60}),
    );
    assert_eq!(again["applied"], true);
}

#[test]
fn the_prune_skips_held_rows_and_counts_what_is_left() {
    let mut c = connect();
    let ns = unique("prune");
    let ops: Vec<Value> = (0..50).map(|i| json!({"op": "put", "ns": ns, "key": format!("k{i:02}"), "value": i, "ttlSeconds": 1})).collect();
    kv(&mut c, json!(ops));
    let mut holder = connect();
    let mut h = holder.transaction().unwrap();
    h.execute(
        "SELECT 1 FROM queen.kv WHERE ns = $1 AND key < 'k10' FOR UPDATE",
        &[&ns],
    )
    .unwrap();
    thread::sleep(Duration::from_millis(1100));
    let started = Instant::now();
    // Never waits on the held rows; deletes the rest.
    while rows_in(&mut c, &ns) > 10 {
        let r: Value = c
            .query_one(
                "SELECT queen_internal.kv_expire_step_v1(0, 1000)::jsonb",
                &[],
            )
            .unwrap()
            .get(0);
        assert!(
            r["expiredPresent"].as_i64().unwrap() >= 10,
            "the held rows are counted: {r}"
        );
        assert!(started.elapsed() < Duration::from_secs(30));
    }
    assert_eq!(rows_in(&mut c, &ns), 10);
    h.rollback().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while rows_in(&mut c, &ns) > 0 {
        assert!(Instant::now() < deadline, "the sweepers prune the rest");
        thread::sleep(Duration::from_millis(200));
    }
    let m: Value = c
        .query_one("SELECT queen.sweeper_metrics()::jsonb", &[])
        .unwrap()
        .get(0);
    assert!(m["kvPrunePassesTotal"].as_i64().unwrap() > 0, "{m}");
}

#[test]
fn churn_stays_bounded_by_the_prune() {
    let mut c = connect();
    let ns = unique("churn");
    let mut peak = 0;
    let written = 12000;
    for round in 0..60 {
        let ops: Vec<Value> =
            (0..200).map(|i| json!({"op": "put", "ns": ns, "key": format!("r{round}-{i}"), "value": i, "ttlSeconds": 1})).collect();
        kv(&mut c, json!(ops));
        peak = peak.max(rows_in(&mut c, &ns));
        thread::sleep(Duration::from_millis(100));
    }
    // About 2000 keys a second live for one second; the prune runs every
    // second: the table holds a few seconds' worth, never the whole history.
    assert!(peak < written / 2, "peak {peak} of {written} written");
    let deadline = Instant::now() + Duration::from_secs(30);
    while rows_in(&mut c, &ns) > 0 {
        assert!(Instant::now() < deadline, "everything expired is pruned");
        thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_write_past_quota_is_refused_and_writes_nothing() {
    let mut c = connect();
    let ns = unique("quota");
    kv(
        &mut c,
        json!([
            {"op": "put", "ns": ns, "key": "a", "value": 1, "forever": true},
            {"op": "put", "ns": ns, "key": "b", "value": 2, "forever": true}
        ]),
    );
    c.query_one("SELECT queen.kv_quota($1, 3, NULL)", &[&ns])
        .unwrap();
    c.query_one("SELECT queen_internal.kv_usage_rollup_v1()", &[])
        .unwrap();
    let usage: Value = c
        .query_one("SELECT queen.kv_usage($1)::jsonb", &[&ns])
        .unwrap()
        .get(0);
    assert_eq!(usage["namespaces"][0]["keys"], 2, "{usage}");
    assert_eq!(usage["namespaces"][0]["maxKeys"], 3);
    // Overwriting a key does not grow the namespace; one new key fits.
    assert_eq!(
        kv1(
            &mut c,
            json!({"op": "put", "ns": ns, "key": "a", "value": 9, "forever": true})
        )["applied"],
        true
    );
    let err = c
        .query_one(
            "SELECT queen.kv($1)",
            &[&json!({"operations": [
                {"op": "put", "ns": ns, "key": "c", "value": 3, "forever": true},
                {"op": "put", "ns": ns, "key": "d", "value": 4, "forever": true}
            ]})],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&err), "53400", "{err}");
    assert!(
        err.as_db_error()
            .unwrap()
            .message()
            .contains("storage_quota_exceeded"),
        "{err}"
    );
    assert_eq!(
        rows_in(&mut c, &ns),
        2,
        "nothing of the refused call was written"
    );
    assert_eq!(
        kv1(
            &mut c,
            json!({"op": "put", "ns": ns, "key": "c", "value": 3, "forever": true})
        )["applied"],
        true
    );
    // A delete frees room once the rollup has seen it.
    kv1(&mut c, json!({"op": "delete", "ns": ns, "key": "a"}));
    c.query_one("SELECT queen.kv_quota($1, NULL, NULL)", &[&ns])
        .unwrap();
    let usage: Value = c
        .query_one("SELECT queen.kv_usage($1)::jsonb", &[&ns])
        .unwrap()
        .get(0);
    assert!(
        usage["namespaces"][0]["maxKeys"].is_null(),
        "quota removed: {usage}"
    );
}

#[test]
fn bad_kv_input_is_refused_with_a_sqlstate() {
    let mut c = connect();
    for (op, state) in [
        (
            json!({"op": "put", "ns": "n", "key": "k", "value": 1}),
            "22023",
        ),
        (
            json!({"op": "put", "ns": "n", "key": "k", "value": 1, "ttlSeconds": 5, "forever": true}),
            "22023",
        ),
        (
            json!({"op": "put", "ns": "n", "key": "k", "value": 1, "ttlSeconds": 0}),
            "22023",
        ),
        (
            json!({"op": "put", "ns": "n", "key": "k", "value": 1, "ttlSeconds": 5, "expect": null}),
            "22023",
        ),
        (
            json!({"op": "put", "ns": "bad ns", "key": "k", "value": 1, "ttlSeconds": 5}),
            "22023",
        ),
        (
            json!({"op": "put", "ns": "n", "key": "", "value": 1, "ttlSeconds": 5}),
            "22023",
        ),
        (json!({"op": "getPrefix", "ns": "n", "prefix": ""}), "22023"),
        (json!({"op": "check", "ns": "n", "key": "k"}), "22023"),
        (
            json!({"op": "incr", "ns": "n", "key": "k", "delta": "1", "ttlSeconds": 5}),
            "42804",
        ),
        (json!({"op": "frobnicate", "ns": "n", "key": "k"}), "22023"),
        (
            json!({"op": "put", "ns": "n", "key": "k", "value": "x".repeat(2 << 20), "ttlSeconds": 5}),
            "54000",
        ),
    ] {
        let err = c
            .query_one(
                "SELECT queen.kv($1)",
                &[&json!({"operations": [op.clone()]})],
            )
            .unwrap_err();
        assert_eq!(sqlstate(&err), state, "{op}: {err}");
    }
    let err = c
        .query_one(
            "SELECT queen.transaction($1)",
            &[&json!({"kv": [{"op": "getPrefix", "ns": "n", "prefix": "a"}]})],
        )
        .unwrap_err();
    assert_eq!(
        sqlstate(&err),
        "22023",
        "getPrefix is refused inside a transaction: {err}"
    );
}

#[test]
fn get_prefix_pages_through_a_prefix_and_nothing_else() {
    let mut c = connect();
    let ns = unique("prefix");
    let ops: Vec<Value> = ["a1", "a2", "a3", "a4", "a5", "b1", "a\u{10FFFF}x"]
        .iter()
        .map(|k| json!({"op": "put", "ns": ns, "key": k, "value": k, "ttlSeconds": 60}))
        .collect();
    kv(&mut c, json!(ops));
    let mut seen = Vec::new();
    let mut after = Value::Null;
    loop {
        let page = kv1(
            &mut c,
            json!({"op": "getPrefix", "ns": ns, "prefix": "a", "limit": 2, "after": after}),
        );
        seen.extend(
            page["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["key"].as_str().unwrap().to_owned()),
        );
        if page["truncated"] != true {
            break;
        }
        after = page["nextAfter"].clone();
    }
    assert_eq!(seen, vec!["a1", "a2", "a3", "a4", "a5", "a\u{10FFFF}x"]);
    let many = kv1(
        &mut c,
        json!({"op": "getMany", "ns": ns, "keys": ["b1", "zz", "a1"]}),
    );
    assert_eq!(many["missing"], json!(["zz"]));
    assert_eq!(many["rows"].as_array().unwrap().len(), 2);
}

#[test]
fn a_required_precondition_gates_the_whole_transaction() {
    let mut c = connect();
    let ns = unique("txkv");
    let queue = unique("txkv");
    let v = kv1(
        &mut c,
        json!({"op": "put", "ns": ns, "key": "gate", "value": "open", "ttlSeconds": 60}),
    )["version"]
        .as_i64()
        .unwrap();
    let body = |expect: i64| {
        json!({
            "operations": [{"type": "push", "items": [{"queue": queue, "payload": {"n": 1}}, {"queue": queue, "payload": {"n": 2}}]}],
            "kv": [{"op": "put", "ns": ns, "key": "side", "value": 1, "ttlSeconds": 60},
                   {"op": "check", "ns": ns, "key": "gate", "expect": expect, "required": true}],
            "timers": [{"op": "schedule", "queue": queue, "timerKey": "t", "payload": "MQ==", "delayMs": 600000}]
        })
    };
    let lost: Value = c
        .query_one("SELECT queen.transaction($1)::jsonb", &[&body(v + 1000)])
        .unwrap()
        .get(0);
    assert_eq!(lost["success"], false);
    assert_eq!(lost["reason"], "kv_precondition");
    assert_eq!(
        lost["failedIndex"], 3,
        "two pushed items, then the kv rider's second op"
    );
    assert_eq!(lost["kvReason"], "version");
    assert_eq!(lost["value"], "open");
    assert_eq!(rows_in(&mut c, &ns), 1, "the rider's put was not written");
    let queued: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.queues WHERE name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(queued, 0, "no push was applied");
    let timers: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_timers WHERE queue = $1",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert_eq!(timers, 0);

    let won: Value = c
        .query_one("SELECT queen.transaction($1)::jsonb", &[&body(v)])
        .unwrap()
        .get(0);
    assert_eq!(won["success"], true, "{won}");
    let results = won["results"].as_array().unwrap();
    assert_eq!(results.len(), 5, "2 pushes, 2 kv ops, 1 timer: {won}");
    assert_eq!(results[2]["applied"], true);
    assert_eq!(results[3]["applied"], true);
    assert_eq!(results[4]["status"], "scheduled");
    assert_eq!(rows_in(&mut c, &ns), 2);

    // A refused ack rolls the kv writes back with everything else.
    let err = c
        .query_one(
            "SELECT queen.transaction($1)",
            &[&json!({"operations": [{"type": "ack", "transactionId": "nope", "partitionId": "1", "leaseId": uuid::Uuid::new_v4().to_string(), "status": "completed"}],
                       "kv": [{"op": "incr", "ns": ns, "key": "rolled", "ttlSeconds": 60}]})],
        )
        .unwrap_err();
    assert!(!sqlstate(&err).is_empty());
    assert_eq!(
        kv1(&mut c, json!({"op": "get", "ns": ns, "key": "rolled"}))["found"],
        false
    );
}

#[test]
fn a_lock_has_one_holder_and_its_token_only_rises() {
    let mut c = connect();
    let name = unique("lock");
    let results: Vec<Value> = (0..4)
        .map(|t| {
            let name = name.clone();
            thread::spawn(move || locks(&mut connect(), json!({"op": "acquire", "name": name, "ttlSeconds": 30, "owner": format!("o{t}")})))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    let winners: Vec<&Value> = results.iter().filter(|r| r["acquired"] == true).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let w = winners[0].clone();
    let t1 = w["token"].as_i64().unwrap();
    for r in results.iter().filter(|r| r["acquired"] != true) {
        assert!(r["reason"] == "held" || r["reason"] == "contended", "{r}");
    }
    // The same owner asking again gets the permit it holds.
    let again = locks(
        &mut c,
        json!({"op": "acquire", "name": name, "ttlSeconds": 30, "owner": w["owner"]}),
    );
    assert_eq!(
        (again["already"].clone(), again["token"].clone()),
        (json!(true), json!(t1))
    );
    let renewed = locks(
        &mut c,
        json!({"op": "renew", "name": name, "token": t1, "ttlSeconds": 30}),
    );
    let t2 = renewed["token"].as_i64().unwrap();
    assert!(t2 > t1);
    assert_eq!(
        locks(
            &mut c,
            json!({"op": "renew", "name": name, "token": t1, "ttlSeconds": 30})
        )["reason"],
        "lost"
    );
    assert_eq!(
        locks(&mut c, json!({"op": "release", "name": name, "token": t1}))["released"],
        false
    );
    assert_eq!(
        locks(&mut c, json!({"op": "release", "name": name, "token": t2}))["released"],
        true
    );
    assert_eq!(
        locks(&mut c, json!({"op": "get", "name": name}))["held"],
        false
    );
    let next = locks(
        &mut c,
        json!({"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "later"}),
    );
    assert!(
        next["token"].as_i64().unwrap() > t2,
        "a new holder's token is above every earlier one"
    );
    // A semaphore of two.
    let sem = unique("sem");
    let held: Vec<Value> = (0..3).map(|i| locks(&mut c, json!({"op": "acquire", "name": sem, "ttlSeconds": 30, "owner": format!("s{i}"), "limit": 2}))).collect();
    assert_eq!(held.iter().filter(|r| r["acquired"] == true).count(), 2);
    assert_eq!(held[2]["reason"], "held");
    let slots: BTreeSet<i64> = held.iter().filter_map(|r| r["slot"].as_i64()).collect();
    assert_eq!(slots, BTreeSet::from([0, 1]));
}

#[test]
fn a_guard_commits_nothing_once_the_lock_passed_to_another_holder() {
    let mut c = connect();
    let name = unique("guard");
    let queue = unique("guarded");
    let first = locks(
        &mut c,
        json!({"op": "acquire", "name": name, "ttlSeconds": 1, "owner": "paused"}),
    );
    let guard = first["guard"].clone();
    let step = |c: &mut postgres::Client, guard: &Value| -> Value {
        c.query_one(
            "SELECT queen.transaction($1)::jsonb",
            &[&json!({"operations": [{"type": "push", "items": [{"queue": queue, "payload": 1}]}], "kv": [guard]})],
        )
        .unwrap()
        .get(0)
    };
    assert_eq!(step(&mut c, &guard)["success"], true);
    thread::sleep(Duration::from_millis(1100));
    let second = locks(
        &mut c,
        json!({"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "next"}),
    );
    assert_eq!(
        second["acquired"], true,
        "the expired permit is free: {second}"
    );
    let late = step(&mut c, &guard);
    assert_eq!(
        late["success"], false,
        "the replaced holder commits nothing: {late}"
    );
    assert_eq!(late["value"]["owner"], "next");
    assert_eq!(step(&mut c, &second["guard"])["success"], true);
    let messages: i64 = c
        .query_one("SELECT coalesce(sum(COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) + 1), 0)::int8 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1", &[&queue])
        .unwrap()
        .get(0);
    assert_eq!(messages, 2);
}

/// Transactions over several KV keys in random orders, timers, pushes and
/// acks, racing the sweepers and retention steps: the lock order holds, so
/// PostgreSQL never reports a deadlock (40P01).
#[test]
fn the_lock_order_soak_reports_no_deadlock() {
    let ns = unique("soak");
    let queue = unique("soak");
    let mut c = connect();
    c.query_one("SELECT queen.configure($1, '{\"retentionEnabled\": true, \"retentionSeconds\": 1, \"leaseTime\": 30}')", &[&queue]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let (ns, queue) = (ns.clone(), queue.clone());
            thread::spawn(move || {
                let mut c = connect();
                let mut errors = Vec::new();
                let mut committed = 0;
                let mut i = 0u64;
                while Instant::now() < deadline {
                    i += 1;
                    // Keys and partitions in an order that differs per call.
                    let mut keys: Vec<String> = (0..4).map(|k| format!("k{}", (k * 7 + i as usize + w) % 6)).collect();
                    if i.is_multiple_of(2) {
                        keys.reverse();
                    }
                    let kv_ops: Vec<Value> = keys.iter().map(|k| json!({"op": "incr", "ns": ns, "key": k, "ttlSeconds": 2})).collect();
                    let items: Vec<Value> = (0..3).map(|p| json!({"queue": queue, "partition": format!("p{}", (p + i as usize) % 4), "payload": i})).collect();
                    let popped = pop(&mut c, &queue, None, 5, &json!({}));
                    let acks: Vec<Value> = messages(&popped)
                        .iter()
                        .map(|m| json!({"type": "ack", "transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": "completed"}))
                        .collect();
                    let mut ops = vec![json!({"type": "push", "items": items})];
                    ops.extend(acks);
                    let body = json!({
                        "operations": ops,
                        "kv": kv_ops,
                        "timers": [{"op": "schedule", "queue": queue, "timerKey": format!("t{}", i % 5), "payload": "MQ==", "delayMs": 0}]
                    });
                    match c.query_one("SELECT queen.transaction($1)", &[&body]) {
                        Ok(_) => committed += 1,
                        Err(e) => errors.push(sqlstate(&e)),
                    }
                }
                (committed, errors)
            })
        })
        .collect();
    // Maintenance from SQL with the workers' transaction boundaries: one
    // retention step per partition and statement, a claim and its fires,
    // a prune pass. (The workers themselves run beside all of it.)
    let maintenance = {
        let queue = queue.clone();
        thread::spawn(move || {
            let mut c = connect();
            let mut errors = Vec::new();
            while Instant::now() < deadline {
                let pids: Vec<i64> = c
                    .query("SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1", &[&queue])
                    .unwrap()
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                let mut outcomes = Vec::new();
                for pid in pids {
                    outcomes.push(c.query_one("SELECT queen_internal.log_retention_step_v1($1, now() - interval '1 second', NULL, 100)", &[&pid]).map(|_| ()));
                }
                outcomes.push(
                    c.query_one("SELECT queen_internal.sweeper_run_once()", &[])
                        .map(|_| ()),
                );
                outcomes.push(
                    c.query_one("SELECT queen_internal.kv_expire_step_v1(0, 100)", &[])
                        .map(|_| ()),
                );
                errors.extend(
                    outcomes
                        .into_iter()
                        .filter_map(|o| o.err())
                        .map(|e| sqlstate(&e)),
                );
            }
            errors
        })
    };
    let mut committed = 0;
    let mut all: Vec<String> = Vec::new();
    for h in workers {
        let (n, errors) = h.join().unwrap();
        committed += n;
        all.extend(errors);
    }
    all.extend(maintenance.join().unwrap());
    assert!(
        committed >= 100,
        "the soak did work: {committed} transactions committed"
    );
    let fired: i64 = c
        .query_one(
            "SELECT count(*) FROM queen.log_timers t WHERE queue = $1 AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)",
            &[&queue],
        )
        .unwrap()
        .get(0);
    assert!(
        fired <= 5,
        "the scheduled timers were fired as they fell due"
    );
    assert!(!all.contains(&"40P01".to_owned()), "deadlocks: {all:?}");
    // An ack whose lease another transaction's retention step ended can be
    // refused (55000); nothing else may fail.
    let unexpected: Vec<&String> = all.iter().filter(|s| s.as_str() != "55000").collect();
    assert!(unexpected.is_empty(), "{unexpected:?}");
}

/// The locks' namespace is written by the locks calls alone: a plain KV
/// put, delete or increment of a permit's row is refused (22023) and the
/// lock stays with its holder; reading it, and a transaction's guard of it,
/// stay open.
#[test]
fn a_plain_kv_write_can_not_take_or_drop_a_lock() {
    let mut c = connect();
    let name = unique("kept");
    let held = locks(
        &mut c,
        json!({"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "holder"}),
    );
    assert_eq!(held["acquired"], true, "{held}");
    let key = format!("{name}#0");
    for op in [
        json!({"op": "delete", "ns": "queen-locks", "key": key}),
        json!({"op": "put", "ns": "queen-locks", "key": key, "value": {"owner": "thief"}, "ttlSeconds": 30}),
        json!({"op": "putIfAbsent", "ns": "queen-locks", "key": format!("{name}#1"), "value": 1, "ttlSeconds": 30}),
        json!({"op": "incr", "ns": "queen-locks", "key": key, "ttlSeconds": 30}),
    ] {
        let err = c
            .query_one(
                "SELECT queen.kv($1)::jsonb",
                &[&json!({ "operations": [op.clone()] })],
            )
            .unwrap_err();
        let db = err.as_db_error().expect("an ERROR");
        assert_eq!(db.code().code(), "22023", "{op}: {db}");
        assert!(db.message().contains("queen-locks"), "{db}");
    }
    let now = locks(&mut c, json!({"op": "get", "name": name}));
    assert_eq!(now["held"], true, "{now}");
    assert_eq!(
        locks(
            &mut c,
            json!({"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "thief"})
        )["acquired"],
        false
    );
    let read = kv1(
        &mut c,
        json!({"op": "get", "ns": "queen-locks", "key": key}),
    );
    assert_eq!(read["found"], true, "{read}");
    let checked = kv1(
        &mut c,
        json!({"op": "check", "ns": "queen-locks", "key": key, "expect": held["token"]}),
    );
    assert_eq!(checked["applied"], true, "{checked}");
}
