//! queen sharded over three databases behind a PL/Proxy proxy
//! (scripts/cluster.sh, docs/scale.md), through the proxy's SQL API: queues
//! land on the shard the routing hash gives and live there whole, answers
//! come back as one database gives them, bodies naming several shards are
//! split and answered in the caller's order, and a transaction stays on one
//! shard or is refused with nothing written.

use postgres::{Client, NoTls};
use queen_frames::push_body::{encode_push_body, GroupMessages, PushGroup, PushItem};
use queen_frames::route::{slot_of, SHARD_ID_BITS};
use queen_it::unique;
use serde_json::{json, Value};

/// The proxy (`make test` starts the deployment and sets these).
fn proxy() -> Client {
    let dsn = std::env::var("QUEEN_CLUSTER_DSN")
        .unwrap_or_else(|_| "host=127.0.0.1 port=6550 user=postgres dbname=queen".to_owned());
    Client::connect(&dsn, NoTls).unwrap_or_else(|e| panic!("connecting to the proxy {dsn}: {e}"))
}

/// The shards, in order, each connected directly.
fn shards() -> Vec<Client> {
    let dsns = std::env::var("QUEEN_CLUSTER_SHARD_DSNS").unwrap_or_else(|_| {
        (0..3)
            .map(|n| {
                format!(
                    "host=127.0.0.1 port={} user=postgres dbname=queen_s{n}",
                    6551 + n
                )
            })
            .collect::<Vec<_>>()
            .join(";")
    });
    dsns.split(';')
        .map(|d| {
            Client::connect(d, NoTls).unwrap_or_else(|e| panic!("connecting to shard {d}: {e}"))
        })
        .collect()
}

fn call(c: &mut Client, sql: &str, args: &[&(dyn postgres::types::ToSql + Sync)]) -> Value {
    c.query_one(sql, args)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .try_get(0)
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
}

fn route(p: &mut Client, queue: &str) -> usize {
    p.query_one("SELECT queen.route_queue($1)", &[&queue])
        .unwrap()
        .get::<_, i32>(0) as usize
}

/// The shard's own answer for `queue` (NULL json when it has no such queue).
fn depth_on(shard: &mut Client, queue: &str) -> i64 {
    let exists: bool = shard
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM queen.queues WHERE name = $1)",
            &[&queue],
        )
        .unwrap()
        .get(0);
    if !exists {
        return -1;
    }
    shard
        .query_one(
            "SELECT coalesce(sum(COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) + 1), 0)::bigint FROM queen.log_partitions p \
               JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1",
            &[&queue],
        )
        .unwrap()
        .get(0)
}

/// One queue name per shard, found by trying names until each shard has one.
fn one_queue_per_shard(p: &mut Client, prefix: &str) -> Vec<String> {
    let mut found: Vec<Option<String>> = vec![None; 3];
    for _ in 0..200 {
        let q = unique(prefix);
        let s = route(p, &q);
        if found[s].is_none() {
            found[s] = Some(q);
        }
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    found
        .into_iter()
        .map(|q| q.expect("a name for every shard"))
        .collect()
}

/// A binary push body (QPB1) as the clients compress it (flag 1): the same
/// header, the rest zstd-compressed behind its raw length.
fn compressed(plain: &[u8]) -> Vec<u8> {
    let mut packed = plain[..4].to_vec();
    packed.push(plain[4] | queen_frames::push_body::FLAG_ZSTD);
    packed.extend_from_slice(&((plain.len() - 5) as u32).to_le_bytes());
    packed.extend_from_slice(&zstd::bulk::compress(&plain[5..], 3).unwrap());
    packed
}

/// Acks a pop's `messages` as completed (for `group` when given) through
/// the proxy; every ack must succeed.
fn complete(p: &mut Client, messages: &[Value], group: Option<&str>) {
    let acks: Vec<Value> = messages
        .iter()
        .map(|m| {
            json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                   "leaseId": m["leaseId"], "status": "completed", "consumerGroup": group})
        })
        .collect();
    let acked = call(p, "SELECT queen.ack($1)", &[&Value::Array(acks)]);
    assert!(
        acked
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["success"] == true),
        "{acked}"
    );
}

fn pid(v: &Value) -> i64 {
    match &v["partitionId"] {
        Value::String(s) => s.parse().unwrap(),
        other => other.as_i64().unwrap(),
    }
}

#[test]
fn queues_live_whole_on_the_shard_the_hash_gives() {
    let mut p = proxy();
    let mut s = shards();
    let queues: Vec<String> = (0..30).map(|_| unique("spread")).collect();
    let mut per_shard = [0usize; 3];
    for q in &queues {
        let items = json!([{"queue": q, "payload": {"n": 1}}, {"queue": q, "partition": "p2", "payload": {"n": 2}}]);
        let answer = call(&mut p, "SELECT queen.push($1)", &[&items]);
        let shard = route(&mut p, q);
        per_shard[shard] += 1;
        // The partition ids carry the shard that gave them.
        for a in answer.as_array().unwrap() {
            assert_eq!(pid(a) >> SHARD_ID_BITS, shard as i64, "{a}");
        }
        for (n, c) in s.iter_mut().enumerate() {
            let depth = depth_on(c, q);
            if n == shard {
                assert_eq!(depth, 2, "{q} on its shard {n}");
            } else {
                assert_eq!(depth, -1, "{q} must not be on shard {n}");
            }
        }
        // The proxy's slot map and the shared hash agree.
        let slot: i32 = p
            .query_one("SELECT queen.queue_slot($1)", &[q])
            .unwrap()
            .get(0);
        assert_eq!(slot, slot_of(q));
    }
    assert!(
        per_shard.iter().all(|&n| n > 0),
        "30 queues over 3 shards: {per_shard:?}"
    );
}

#[test]
fn push_pop_and_ack_through_the_proxy_answer_as_one_database() {
    let mut p = proxy();
    let q = unique("path");
    let items: Vec<Value> = (0..5)
        .map(|i| json!({"queue": q, "payload": {"i": i}, "transactionId": format!("{q}-{i}")}))
        .collect();
    let pushed = call(
        &mut p,
        "SELECT queen.push($1)",
        &[&Value::Array(items.clone())],
    );
    assert_eq!(pushed.as_array().unwrap().len(), 5);
    assert!(
        pushed
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["status"] == "queued"),
        "{pushed}"
    );
    // The same transaction ids again: stored once.
    let again = call(&mut p, "SELECT queen.push($1)", &[&Value::Array(items)]);
    assert!(
        again
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["status"] == "duplicate"),
        "{again}"
    );

    let popped = call(&mut p, "SELECT queen.pop($1, NULL, NULL, 10, '{}')", &[&q]);
    let messages = popped["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 5, "{popped}");
    let order: Vec<i64> = messages
        .iter()
        .map(|m| m["data"]["i"].as_i64().unwrap())
        .collect();
    assert_eq!(order, vec![0, 1, 2, 3, 4]);
    complete(&mut p, &messages, None);
    let empty = call(&mut p, "SELECT queen.pop($1, NULL, NULL, 10, '{}')", &[&q]);
    assert_eq!(
        empty["messages"].as_array().map_or(0, Vec::len),
        0,
        "{empty}"
    );
}

#[test]
fn a_push_naming_every_shard_is_split_and_answered_in_the_callers_order() {
    let mut p = proxy();
    let mut s = shards();
    let queues = one_queue_per_shard(&mut p, "split");
    let items: Vec<Value> = (0..9)
        .map(|i| {
            let q = &queues[i % 3];
            json!({"queue": q, "payload": {"i": i}, "transactionId": format!("{q}-{i}")})
        })
        .collect();
    let answer = call(
        &mut p,
        "SELECT queen.push($1)",
        &[&Value::Array(items.clone())],
    );
    let answers = answer.as_array().unwrap();
    assert_eq!(answers.len(), 9);
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["index"], i, "{a}");
        assert_eq!(a["queue"], json!(queues[i % 3]), "{a}");
        assert_eq!(a["status"], "queued");
        assert_eq!(pid(a) >> SHARD_ID_BITS, (i % 3) as i64);
    }
    for (n, q) in queues.iter().enumerate() {
        assert_eq!(depth_on(&mut s[n], q), 3, "{q} on shard {n}");
    }
    // Split again, all duplicates.
    let again = call(&mut p, "SELECT queen.push($1)", &[&Value::Array(items)]);
    assert!(
        again
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["status"] == "duplicate"),
        "{again}"
    );

    // The binary body (QPB1) the clients send, split the same way.
    let groups: Vec<PushGroup> = queues
        .iter()
        .map(|q| PushGroup {
            queue: q.clone(),
            partition: "Default".into(),
            messages: GroupMessages::Items(vec![PushItem {
                transaction_id: None,
                payload: b"{\"b\":1}".to_vec(),
            }]),
        })
        .collect();
    let body = encode_push_body(&groups, false).unwrap();
    let answer = call(&mut p, "SELECT queen.push_binary($1)", &[&body]);
    let answers = answer.as_array().unwrap();
    assert_eq!(answers.len(), 3, "{answer}");
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["index"], i);
        assert_eq!(a["queue"], json!(queues[i]));
    }
    for (n, q) in queues.iter().enumerate() {
        assert_eq!(depth_on(&mut s[n], q), 4, "{q} on shard {n}");
    }
    // A compressed binary body whose groups are all on one shard (not
    // shard 0) goes to it whole, read from its headers only.
    let one: Vec<PushGroup> = ["p1", "p2"]
        .iter()
        .map(|part| PushGroup {
            queue: queues[2].clone(),
            partition: (*part).into(),
            messages: GroupMessages::Items(vec![PushItem {
                transaction_id: None,
                payload: format!("{{\"fill\":\"{}\"}}", "z".repeat(4096)).into_bytes(),
            }]),
        })
        .collect();
    let plain = encode_push_body(&one, false).unwrap();
    let packed = compressed(&plain);
    assert!(packed.len() < plain.len() / 4, "compressed");
    let answer = call(&mut p, "SELECT queen.push_binary($1)", &[&packed]);
    let answers = answer.as_array().unwrap();
    assert_eq!(answers.len(), 2, "{answer}");
    assert!(answers.iter().all(|a| a["status"] == "queued"), "{answer}");
    assert!(
        answers.iter().all(|a| pid(a) >> SHARD_ID_BITS == 2),
        "{answer}"
    );
    assert_eq!(depth_on(&mut s[2], &queues[2]), 6);

    // Acks of messages of every shard in one body, answered in order.
    let mut acks = Vec::new();
    for q in &queues {
        let popped = call(
            &mut p,
            "SELECT queen.pop($1, NULL, NULL, 10, '{\"autoAck\": false}')",
            &[q],
        );
        for m in popped["messages"].as_array().unwrap() {
            acks.push(
                json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                             "leaseId": m["leaseId"], "status": "completed"}),
            );
        }
    }
    assert_eq!(acks.len(), 12);
    let acked = call(
        &mut p,
        "SELECT queen.ack($1)",
        &[&Value::Array(acks.clone())],
    );
    let acked = acked.as_array().unwrap();
    assert_eq!(acked.len(), 12);
    for (i, a) in acked.iter().enumerate() {
        assert_eq!(a["index"], i, "{a}");
        assert_eq!(a["transactionId"], acks[i]["transactionId"]);
        assert_eq!(a["success"], true, "{a}");
    }
}

/// A read by offset whose entries name queues on every shard: each entry
/// answered, in the caller's order, as each shard answers its own.
#[test]
fn reads_by_offset_across_shards_answer_every_entry_in_the_callers_order() {
    let mut p = proxy();
    let queues = one_queue_per_shard(&mut p, "reads");
    for (k, q) in queues.iter().enumerate() {
        let items: Vec<Value> = (0..3)
            .map(|i| json!({"queue": q, "partition": "p", "payload": {"q": k, "i": i}}))
            .collect();
        call(&mut p, "SELECT queen.push($1)", &[&Value::Array(items)]);
    }
    // Shards 2, 0, 1, 0 again, from different offsets.
    let asked = [(2, 0), (0, 1), (1, 2), (0, 0)];
    let body = json!({"entries": asked.iter().map(|(k, from)| json!({
        "queue": queues[*k], "partition": "p", "offset": from,
    })).collect::<Vec<_>>()});
    let fetched = call(&mut p, "SELECT queen.fetch($1)", &[&body]);
    let entries = fetched["entries"].as_array().unwrap();
    assert_eq!(entries.len(), asked.len(), "{fetched}");
    for (e, (k, from)) in entries.iter().zip(asked) {
        assert_eq!(e["queue"], queues[k], "{fetched}");
        assert_eq!(e["highWatermark"], 3, "{e}");
        let got: Vec<(i64, Value)> = e["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["offset"].as_i64().unwrap(), r["payload"].clone()))
            .collect();
        let want: Vec<(i64, Value)> = (from..3).map(|i| (i, json!({"q": k, "i": i}))).collect();
        assert_eq!(got, want, "{e}");
    }

    // An entry naming no queue: refused as one database refuses it.
    let bad = json!({"entries": [
        {"queue": queues[0], "offset": 0}, {"offset": 0}, {"queue": queues[1], "offset": 0}]});
    let err = p.query_one("SELECT queen.fetch($1)", &[&bad]).unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code().code(), "22023", "{err}");
    assert!(db.message().contains("entries[1].queue"), "{err}");

    let changed = call(
        &mut p,
        "SELECT queen.partitions_changed($1)",
        &[&json!({"entries": [{"queue": queues[1]}, {"queue": queues[0]}, {"queue": queues[2]}]})],
    );
    let entries = changed["entries"].as_array().unwrap();
    for (e, k) in entries.iter().zip([1, 0, 2]) {
        assert_eq!(e["queue"], queues[k], "{changed}");
        assert_eq!(e["partitions"][0]["name"], "p", "{changed}");
        assert_eq!(e["partitions"][0]["lastOffset"], 2, "{changed}");
    }
    assert_eq!(entries.len(), 3, "{changed}");
    // The earliest of the shards' safe times, no later than any shard's own.
    let safe = changed["safeTime"].as_str().unwrap().to_owned();
    for (k, q) in queues.iter().enumerate() {
        let mut shard = shards().swap_remove(k);
        let own = call(
            &mut shard,
            "SELECT queen.partitions_changed($1)",
            &[&json!({"entries": [{"queue": q}]})],
        );
        assert!(
            safe.as_str() <= own["safeTime"].as_str().unwrap(),
            "{safe} {own}"
        );
    }

    // A group's positions: the queue it read on one shard, none on another.
    let group = unique("reader");
    let popped = call(
        &mut p,
        "SELECT queen.pop($1, 'p', $2, 10, '{\"subscriptionMode\": \"all\"}')",
        &[&queues[0], &group],
    );
    let messages = popped["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{popped}");
    complete(&mut p, messages, Some(&group));
    let positions = call(
        &mut p,
        "SELECT queen.consumer_group_positions($1)",
        &[&json!({"consumerGroup": group, "entries": [
            {"queue": queues[2], "partition": "p"}, {"queue": queues[0], "partition": "p"}]})],
    );
    let entries = positions["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{positions}");
    assert_eq!(entries[0]["queue"], queues[2], "{positions}");
    assert_eq!(entries[0]["offset"], Value::Null, "{positions}");
    assert_eq!(entries[1]["queue"], queues[0], "{positions}");
    assert_eq!(entries[1]["offset"], 3, "{positions}");
    assert_eq!(positions["consumerGroup"], group, "{positions}");
}

#[test]
fn consumer_groups_each_read_every_message_through_the_proxy() {
    let mut p = proxy();
    let q = unique("groups");
    let items: Vec<Value> = (0..4)
        .map(|i| json!({"queue": q, "payload": {"i": i}}))
        .collect();
    call(&mut p, "SELECT queen.push($1)", &[&Value::Array(items)]);
    for group in ["g1", "g2"] {
        let popped = call(
            &mut p,
            "SELECT queen.pop($1, NULL, $2, 10, '{\"subscriptionMode\": \"all\"}')",
            &[&q, &group],
        );
        assert_eq!(
            popped["messages"].as_array().unwrap().len(),
            4,
            "{group}: {popped}"
        );
    }
}

#[test]
fn a_transaction_stays_on_one_shard_or_is_refused_with_nothing_written() {
    let mut p = proxy();
    let mut s = shards();
    // Two queues with one shard key live together.
    let key = uuid::Uuid::new_v4().simple().to_string();
    let (a, b) = (format!("orders{{{key}}}"), format!("invoices{{{key}}}"));
    assert_eq!(route(&mut p, &a), route(&mut p, &b));
    let shard = route(&mut p, &a);
    let body = json!({"operations": [
        {"type": "push", "items": [{"queue": a, "payload": {"x": 1}}]},
        {"type": "push", "items": [{"queue": b, "payload": {"x": 2}}]}
    ]});
    let answer = call(&mut p, "SELECT queen.transaction($1)", &[&body]);
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(depth_on(&mut s[shard], &a), 1);
    assert_eq!(depth_on(&mut s[shard], &b), 1);

    // Queues on different shards: refused, naming them, nothing written.
    let queues = one_queue_per_shard(&mut p, "txn");
    let body = json!({"operations": [
        {"type": "push", "items": [{"queue": queues[0], "payload": {}}]},
        {"type": "push", "items": [{"queue": queues[1], "payload": {}}]}
    ]});
    let err = p
        .query_one("SELECT queen.transaction($1)", &[&body])
        .unwrap_err();
    let db = err.as_db_error().expect("an ERROR");
    assert_eq!(db.code().code(), "22023", "{db:?}");
    assert!(
        db.message().contains(&queues[0]) && db.message().contains(&queues[1]),
        "{}",
        db.message()
    );
    assert_eq!(depth_on(&mut s[0], &queues[0]), -1);
    assert_eq!(depth_on(&mut s[1], &queues[1]), -1);
}

#[test]
fn a_namespace_pop_reads_the_queues_of_every_shard() {
    let mut p = proxy();
    let ns = unique("ns");
    let queues = one_queue_per_shard(&mut p, "nsq");
    for q in &queues {
        call(
            &mut p,
            "SELECT queen.configure($1, $2)",
            &[q, &json!({"namespace": ns})],
        );
        call(
            &mut p,
            "SELECT queen.push($1)",
            &[&json!([{"queue": q, "payload": {"q": q}}])],
        );
    }
    let mut seen = Vec::new();
    for _ in 0..6 {
        let popped = call(
            &mut p,
            "SELECT queen.pop(NULL, NULL, NULL, 10, $1)",
            &[&json!({"namespace": ns, "autoAck": true})],
        );
        for m in popped["messages"].as_array().into_iter().flatten() {
            seen.push(m["data"]["q"].as_str().unwrap().to_owned());
        }
    }
    seen.sort();
    let mut want = queues.clone();
    want.sort();
    assert_eq!(seen, want);
    // The version a long poll watches sums the shards', and grows with a push.
    let before: i64 = p
        .query_one("SELECT queen.queue_version(NULL, $1, NULL)", &[&ns])
        .unwrap()
        .get(0);
    call(
        &mut p,
        "SELECT queen.push($1)",
        &[&json!([{"queue": queues[2], "payload": {}}])],
    );
    let after: i64 = p
        .query_one("SELECT queen.queue_version(NULL, $1, NULL)", &[&ns])
        .unwrap()
        .get(0);
    assert!(after > before, "{before} -> {after}");
}

#[test]
fn the_global_readers_add_up_the_shards() {
    let mut p = proxy();
    let mut s = shards();
    let queues = one_queue_per_shard(&mut p, "global");
    for q in &queues {
        call(
            &mut p,
            "SELECT queen.push($1)",
            &[&json!([{"queue": q, "payload": {}}])],
        );
    }
    let listed = call(&mut p, "SELECT queen.list_queues()", &[]);
    let names: Vec<&str> = listed["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap())
        .collect();
    for q in &queues {
        assert!(names.contains(&q.as_str()), "{q}");
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "listed by name");
    // Totals: the proxy's are the shards' added up. Other tests add queues
    // meanwhile (none is deleted here), so the proxy's total lies between
    // the shards' sums read just before and just after it.
    let totals = |s: &mut Vec<Client>| -> (i64, i64) {
        s.iter_mut().fold((0, 0), |(t, m), c| {
            let listed = call(c, "SELECT queen.list_queues()", &[]);
            let overview = call(c, "SELECT queen.overview()", &[]);
            (
                t + listed["total"].as_i64().unwrap(),
                m + overview["queues"].as_i64().unwrap(),
            )
        })
    };
    let before = totals(&mut s);
    let listed = call(&mut p, "SELECT queen.list_queues()", &[]);
    let overview = call(&mut p, "SELECT queen.overview()", &[]);
    let after = totals(&mut s);
    let total = listed["total"].as_i64().unwrap();
    assert!(
        before.0 <= total && total <= after.0,
        "{before:?} {total} {after:?}"
    );
    let queues_total = overview["queues"].as_i64().unwrap();
    assert!(
        before.1 <= queues_total && queues_total <= after.1,
        "{before:?} {overview} {after:?}"
    );
}

#[test]
fn kv_calls_go_to_the_shard_of_their_namespace() {
    let mut p = proxy();
    let mut s = shards();
    let ns = unique("kv");
    let shard: i32 = p
        .query_one("SELECT queen.route_namespace($1)", &[&ns])
        .unwrap()
        .get(0);
    call(
        &mut p,
        "SELECT queen.kv_set($1, 'k', '{\"v\": 1}', NULL, true)",
        &[&ns],
    );
    let got = call(&mut p, "SELECT queen.kv_get($1, 'k')", &[&ns]);
    assert_eq!(got["v"], 1, "{got}");
    for (n, c) in s.iter_mut().enumerate() {
        let rows: i64 = c
            .query_one("SELECT count(*) FROM queen.kv WHERE ns = $1", &[&ns])
            .unwrap()
            .get(0);
        assert_eq!(rows, i64::from(n as i32 == shard), "shard {n}");
    }
}

#[test]
fn fused_calls_are_answered_per_request_across_shards() {
    let mut p = proxy();
    let queues = one_queue_per_shard(&mut p, "fused");
    let mut bodies: Vec<Vec<u8>> = queues
        .iter()
        .map(|q| {
            json!([{"queue": q, "payload": {"one": q}}])
                .to_string()
                .into_bytes()
        })
        .collect();
    // A body naming two shards, and one that is not a push body.
    bodies.push(
        json!([{"queue": queues[0], "payload": 1}, {"queue": queues[1], "payload": 2}])
            .to_string()
            .into_bytes(),
    );
    bodies.push(b"{not json".to_vec());
    let binary = vec![false; bodies.len()];
    let producers: Vec<Option<String>> = vec![None; bodies.len()];
    let text: String = p
        .query_one(
            "SELECT queen.push_fused($1, $2, $3)::text",
            &[&bodies, &binary, &producers],
        )
        .unwrap()
        .get(0);
    let answers: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(answers.len(), 5);
    for (i, q) in queues.iter().enumerate() {
        assert_eq!(answers[i]["ok"][0]["queue"], json!(q), "{}", answers[i]);
    }
    let split = answers[3]["ok"]
        .as_array()
        .expect("the split body's own answer");
    assert_eq!(split.len(), 2);
    assert_eq!(split[1]["index"], 1);
    assert_eq!(split[1]["queue"], json!(queues[1]));
    assert!(
        answers[4]["sqlstate"].as_str().unwrap().starts_with("22"),
        "{}",
        answers[4]
    );

    // A lease renewal reaches the shard that holds the lease.
    let popped = call(
        &mut p,
        "SELECT queen.pop($1, NULL, NULL, 1, '{}')",
        &[&queues[2]],
    );
    let lease = popped["leaseId"].as_str().expect("a lease").to_owned();
    let renewed = call(&mut p, "SELECT queen.renew_lease($1, 30)", &[&lease]);
    assert_eq!(renewed["success"], true, "{renewed}");
    let fused: String = p
        .query_one(
            "SELECT queen.renew_fused($1, $2)::text",
            &[
                &vec![lease.clone(), uuid::Uuid::new_v4().to_string()],
                &vec![Some(30), Some(30)],
            ],
        )
        .unwrap()
        .get(0);
    let fused: Vec<Value> = serde_json::from_str(&fused).unwrap();
    assert_eq!(fused[0]["ok"]["success"], true, "{fused:?}");
    assert_ne!(fused[1]["ok"]["success"], true, "{fused:?}");
}

#[test]
fn an_unreachable_shard_fails_its_own_calls_only() {
    let mut p = proxy();
    let queues = one_queue_per_shard(&mut p, "down");
    // Shard 2 unreachable for this session alone: its server entry points
    // at a closed port inside a transaction no one else sees.
    let mut t = p.transaction().unwrap();
    t.batch_execute("ALTER SERVER queen OPTIONS (SET p2 'host=127.0.0.1 port=1 dbname=queen_s2')")
        .unwrap();
    let err = t
        .query_one(
            "SELECT queen.push($1)",
            &[&json!([{"queue": queues[2], "payload": {}}])],
        )
        .unwrap_err();
    let db = err.as_db_error().expect("an ERROR");
    assert!(matches!(db.code().code(), "08006" | "XX000"), "{db:?}");
    assert!(db.message().contains("queen_s2"), "{}", db.message());
    t.rollback().unwrap();
    let mut t = p.transaction().unwrap();
    t.batch_execute("ALTER SERVER queen OPTIONS (SET p2 'host=127.0.0.1 port=1 dbname=queen_s2')")
        .unwrap();
    for q in &queues[..2] {
        let ok: Value = t
            .query_one(
                "SELECT queen.push($1)",
                &[&json!([{"queue": q, "payload": {}}])],
            )
            .unwrap()
            .get(0);
        assert_eq!(ok[0]["status"], "queued", "{ok}");
    }
    t.rollback().unwrap();
}

/// A push or an ack through the proxy waits on a shard's row lock no
/// longer than its caller's `lock_timeout` (the shard raises 55P03, as one
/// database would); a proxy canceled while a shard runs a write answers
/// 08007 (its outcome is unknown: the shard commits its part on its own),
/// never 57014, which would say that nothing was applied.
#[test]
fn a_shards_lock_wait_is_bounded_by_the_callers_and_a_cancel_leaves_the_outcome_unknown() {
    let mut p = proxy();
    let q = unique("held");
    let shard = route(&mut p, &q);
    let body = json!([{"queue": q, "payload": {"n": 0}}]);
    call(&mut p, "SELECT queen.push($1)", &[&body]);
    // A session on the shard holds the partition: an uncommitted push.
    let mut s = shards().swap_remove(shard);
    let mut held = s.transaction().unwrap();
    held.query_one("SELECT queen.push($1)", &[&body]).unwrap();

    let started = std::time::Instant::now();
    let mut t = p.transaction().unwrap();
    t.batch_execute("SET LOCAL lock_timeout = '200ms'").unwrap();
    let err = t.query_one("SELECT queen.push($1)", &[&body]).unwrap_err();
    let db = err.as_db_error().expect("an ERROR");
    assert_eq!(db.code().code(), "55P03", "{db:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    t.rollback().unwrap();
    // The fused push and the ack take the bound too (a fused request fails
    // alone, with the shard's SQLSTATE).
    let mut t = p.transaction().unwrap();
    t.batch_execute("SET LOCAL lock_timeout = '200ms'").unwrap();
    let bodies: Vec<&[u8]> = vec![body.to_string().into_bytes().leak()];
    let fused: Value = t
        .query_one(
            "SELECT queen.push_fused($1, $2, NULL)::json",
            &[&bodies, &vec![false]],
        )
        .unwrap()
        .get(0);
    assert_eq!(fused[0]["sqlstate"], "55P03", "{fused}");
    t.rollback().unwrap();

    let mut t = p.transaction().unwrap();
    t.batch_execute("SET LOCAL statement_timeout = '300ms'")
        .unwrap();
    let err = t.query_one("SELECT queen.push($1)", &[&body]).unwrap_err();
    let db = err.as_db_error().expect("an ERROR");
    assert_eq!(db.code().code(), "08007", "{db:?}");
    t.rollback().unwrap();

    held.rollback().unwrap();
    // Nothing of the refused and canceled pushes was stored: the first
    // push's message, then the next one.
    let ok = call(&mut p, "SELECT queen.push($1)", &[&body]);
    assert_eq!(ok[0]["status"], "queued", "{ok}");
    assert_eq!(depth_on(&mut shards().swap_remove(shard), &q), 2);
}

#[test]
fn each_shard_runs_retention_on_its_own_queues() {
    let mut p = proxy();
    let mut s = shards();
    let queues = one_queue_per_shard(&mut p, "retention");
    let mut pids = Vec::new();
    for (n, q) in queues.iter().enumerate() {
        call(
            &mut p,
            "SELECT queen.configure($1, '{\"retentionEnabled\": true, \"retentionSeconds\": 60}')",
            &[q],
        );
        for i in 0..3 {
            call(
                &mut p,
                "SELECT queen.push($1)",
                &[&json!([{"queue": q, "payload": i}])],
            );
        }
        // Written two hours ago, as far as the shard can tell.
        let pid = queen_it::pid_of(&mut s[n], q, "Default");
        queen_it::age_partition(&mut s[n], pid, "2 hours");
        s[n].execute(
            "UPDATE queen.maintenance_leases SET next_due_at = now() WHERE task = 'retention'",
            &[],
        )
        .unwrap();
        pids.push(pid);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for (n, pid) in pids.iter().enumerate() {
        loop {
            let left: i64 = s[n]
                .query_one(
                    "SELECT count(*) FROM queen.log_segments WHERE partition_id = $1",
                    &[pid],
                )
                .unwrap()
                .get(0);
            if left == 0 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "shard {n}'s worker did not sweep within a minute"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let audited: i64 = s[n]
            .query_one(
                "SELECT COALESCE(sum(messages_deleted), 0)::int8 FROM queen.retention_history WHERE partition_id = $1",
                &[pid],
            )
            .unwrap()
            .get(0);
        assert_eq!(audited, 3, "shard {n}");
    }
}

#[test]
fn listings_groups_and_dead_letters_read_every_shard() {
    let mut p = proxy();
    let queues = one_queue_per_shard(&mut p, "listing");
    let group = unique("g");
    for q in &queues {
        call(
            &mut p,
            "SELECT queen.push($1)",
            &[&json!([{"queue": q, "payload": {"q": q}, "transactionId": "t-1"}])],
        );
        // One message read by a group and left behind, one dead-lettered.
        call(
            &mut p,
            "SELECT queen.pop($1, NULL, $2, 1, '{\"subscriptionMode\": \"all\"}')",
            &[q, &group],
        );
        let popped = call(&mut p, "SELECT queen.pop($1, NULL, NULL, 1, '{}')", &[q]);
        let m = &popped["messages"][0];
        let ack = json!([{"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                          "leaseId": m["leaseId"], "status": "dlq"}]);
        call(&mut p, "SELECT queen.ack($1)", &[&ack]);
    }
    let names = |v: &Value, list: &str, key: &str| -> Vec<String> {
        v[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[key].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let resources = call(&mut p, "SELECT queen.resource_queues()", &[]);
    let listed = names(&resources, "queues", "name");
    assert!(queues.iter().all(|q| listed.contains(q)), "{listed:?}");

    let detail = call(&mut p, "SELECT queen.consumer_group_detail($1)", &[&group]);
    for q in &queues {
        assert!(detail.get(q).is_some(), "{q} in {detail}");
    }
    let groups = call(&mut p, "SELECT queen.consumer_groups_list()", &[]);
    let ours = groups["consumerGroups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["consumerGroup"] == json!(group))
        .expect("the group listed once");
    let its: Vec<String> = ours["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["queue"].as_str().unwrap().to_owned())
        .collect();
    assert!(queues.iter().all(|q| its.contains(q)), "{its:?}");

    for (i, q) in queues.iter().enumerate() {
        let page = call(&mut p, "SELECT queen.dlq_list($1)", &[&json!({"queue": q})]);
        assert_eq!(page["messages"].as_array().unwrap().len(), 1, "{q}: {page}");
        let id: i64 = page["messages"][0]["id"].as_str().map_or_else(
            || page["messages"][0]["id"].as_i64().unwrap(),
            |s| s.parse().unwrap(),
        );
        assert_eq!(
            id >> SHARD_ID_BITS,
            i as i64,
            "a dead letter's id names its shard"
        );
    }
    let all = call(
        &mut p,
        "SELECT queen.dlq_list($1)",
        &[&json!({"limit": 1000})],
    );
    let dead: Vec<String> = all["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["queue"].as_str().unwrap().to_owned())
        .collect();
    assert!(queues.iter().all(|q| dead.contains(q)), "{dead:?}");
    let failed_at: Vec<&str> = all["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["failedAt"].as_str().unwrap())
        .collect();
    let mut sorted = failed_at.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(failed_at, sorted, "newest failure first");

    let tasks = call(&mut p, "SELECT queen.maintenance_status()", &[]);
    let shards: std::collections::BTreeSet<i64> = tasks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["shard"].as_i64().unwrap())
        .collect();
    assert_eq!(shards.into_iter().collect::<Vec<_>>(), vec![0, 1, 2]);
    let overview = call(&mut p, "SELECT queen.system_overview()", &[]);
    assert!(overview["queues"].as_i64().unwrap() >= 3, "{overview}");
}

#[test]
fn traces_of_one_name_on_every_shard_are_merged_oldest_first_and_paged() {
    let mut p = proxy();
    let queues = one_queue_per_shard(&mut p, "traced");
    let name = unique("trace");
    let mut recorded = Vec::new();
    for (i, q) in queues.iter().enumerate() {
        call(
            &mut p,
            "SELECT queen.push($1)",
            &[&json!([{"queue": q, "payload": {"i": i}, "transactionId": "t-1"}])],
        );
        let popped = call(&mut p, "SELECT queen.pop($1, NULL, NULL, 1, '{}')", &[q]);
        let m = &popped["messages"][0];
        // Two traces a message, their data nested 100 deep.
        for k in 0..2 {
            let deep: Value =
                serde_json::from_str(&format!("{}{k}{}", "[".repeat(100), "]".repeat(100)))
                    .unwrap();
            let t = call(
                &mut p,
                "SELECT queen.trace_record($1)",
                &[
                    &json!({"partitionId": m["partitionId"], "transactionId": m["transactionId"],
                          "traceNames": [name], "eventType": "info", "data": {"d": deep, "q": q}}),
                ],
            );
            recorded.push(t["traceId"].clone());
        }
    }
    let all = call(&mut p, "SELECT queen.traces_by_name($1, 100, 0)", &[&name]);
    assert_eq!(all["total"], json!(6), "{all}");
    let traces = all["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 6, "{all}");
    let at: Vec<&str> = traces
        .iter()
        .map(|t| t["created_at"].as_str().unwrap())
        .collect();
    let mut sorted = at.clone();
    sorted.sort();
    assert_eq!(at, sorted, "oldest first over every shard");
    let on: std::collections::BTreeSet<&str> = traces
        .iter()
        .map(|t| t["data"]["q"].as_str().unwrap())
        .collect();
    assert_eq!(on.len(), 3, "every shard's traces: {all}");
    // A page is cut after the merge.
    let page = call(&mut p, "SELECT queen.traces_by_name($1, 2, 3)", &[&name]);
    assert_eq!(
        page["traces"].as_array().unwrap()[..],
        traces[3..5],
        "{page}"
    );
    assert_eq!(page["pagination"], json!({"limit": 2, "offset": 3}));
    let names = call(&mut p, "SELECT queen.trace_names(1000, 0)", &[]);
    let ours = names["trace_names"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["trace_name"] == json!(name))
        .unwrap_or_else(|| panic!("{name} in {names}"));
    assert_eq!(ours["trace_count"], json!(6), "{ours}");
    assert_eq!(ours["message_count"], json!(3), "{ours}");
}

#[test]
fn kv_batches_and_locks_stay_on_one_shard() {
    let mut p = proxy();
    let key = uuid::Uuid::new_v4().simple().to_string();
    // A namespace lives with the queues whose shard key is its name.
    let (a, queue) = (key.clone(), format!("orders{{{key}}}"));
    assert_eq!(
        p.query_one("SELECT queen.route_namespace($1)", &[&a])
            .unwrap()
            .get::<_, i32>(0) as usize,
        route(&mut p, &queue)
    );
    let ok = call(
        &mut p,
        "SELECT queen.kv($1)",
        &[&json!({"operations": [
            {"op": "put", "ns": a, "key": "k", "value": 1, "ttlSeconds": 60},
            {"op": "put", "ns": a, "key": "k1", "value": 2, "ttlSeconds": 60}
        ]})],
    );
    assert_eq!(ok["results"].as_array().unwrap().len(), 2, "{ok}");
    let body = json!({"kv": [{"op": "put", "ns": a, "key": "t", "value": 3, "ttlSeconds": 60}],
                      "operations": [{"type": "push", "items": [{"queue": queue, "payload": {}}]}]});
    let answer = call(&mut p, "SELECT queen.transaction($1)", &[&body]);
    assert_eq!(answer["success"], true, "{answer}");
    // Two namespaces on different shards in one batch: refused, nothing written.
    let mut far = None;
    for _ in 0..200 {
        let ns = unique("far");
        let s: i32 = p
            .query_one("SELECT queen.route_namespace($1)", &[&ns])
            .unwrap()
            .get(0);
        let here: i32 = p
            .query_one("SELECT queen.route_namespace($1)", &[&a])
            .unwrap()
            .get(0);
        if s != here {
            far = Some(ns);
            break;
        }
    }
    let far = far.expect("a namespace on another shard");
    let err = p
        .query_one(
            "SELECT queen.kv($1)",
            &[&json!({"operations": [
                {"op": "put", "ns": a, "key": "k2", "value": 1, "ttlSeconds": 60},
                {"op": "put", "ns": far, "key": "k2", "value": 2, "ttlSeconds": 60}
            ]})],
        )
        .unwrap_err();
    assert_eq!(err.as_db_error().unwrap().code().code(), "22023", "{err}");
    let got: Option<Value> = p
        .query_one("SELECT queen.kv_get($1, 'k2')", &[&a])
        .unwrap()
        .get(0);
    assert!(got.is_none(), "{got:?}");

    let name = unique("lock");
    let first = call(
        &mut p,
        "SELECT queen.locks($1)",
        &[
            &json!({"operations": [{"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "one"}]}),
        ],
    );
    assert_eq!(first["results"][0]["acquired"], true, "{first}");
    let second = call(
        &mut p,
        "SELECT queen.locks($1)",
        &[
            &json!({"operations": [{"op": "acquire", "name": name, "ttlSeconds": 30, "owner": "two"}]}),
        ],
    );
    assert_ne!(second["results"][0]["acquired"], true, "{second}");
}

/// The function of a shard that the proxy does not offer: the shard's own.
const NOT_ON_THE_PROXY: [&str; 1] = ["shard_set"];

#[test]
fn the_proxy_offers_the_shards_functions_with_their_signatures() {
    let signatures = |c: &mut Client| -> std::collections::BTreeMap<String, String> {
        c.query(
            "SELECT p.proname::text, pg_get_function_arguments(p.oid) || ' -> ' || pg_get_function_result(p.oid)
                    || CASE WHEN p.proisstrict THEN ' strict' ELSE '' END
               FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
    };
    let mut p = proxy();
    let mut s = shards();
    let on_proxy = signatures(&mut p);
    for (name, signature) in signatures(&mut s[0]) {
        if NOT_ON_THE_PROXY.contains(&name.as_str()) {
            assert!(
                !on_proxy.contains_key(&name),
                "{name} is on the proxy: take it off the list"
            );
            continue;
        }
        assert_eq!(
            on_proxy.get(&name),
            Some(&signature),
            "queen.{name} on the proxy"
        );
    }
}

/// A database of its own on the main test cluster, with the extension.
fn fresh_database(name: &str) -> Client {
    let mut admin = queen_it::connect();
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let dsn = queen_it::dsn().replace("dbname=queen", &format!("dbname={name}"));
    let mut c = Client::connect(&dsn, NoTls).unwrap();
    c.batch_execute("SET client_min_messages = warning; CREATE EXTENSION queen")
        .unwrap();
    c
}

#[test]
fn a_shard_draws_its_ids_from_its_own_range_and_a_used_database_can_only_be_shard_0() {
    let mut empty = fresh_database("queen_shard_set_empty");
    let set = call(&mut empty, "SELECT queen.shard_set(3)", &[]);
    assert_eq!(set["shard"], 3, "{set}");
    let pushed = call(
        &mut empty,
        "SELECT queen.push($1)",
        &[&json!([{"queue": "q", "payload": 1}])],
    );
    assert_eq!(pid(&pushed[0]) >> SHARD_ID_BITS, 3, "{pushed}");
    // Again: nothing changes, the next id follows the last.
    call(&mut empty, "SELECT queen.shard_set(3)", &[]);
    let more = call(
        &mut empty,
        "SELECT queen.push($1)",
        &[&json!([{"queue": "q2", "payload": 1}])],
    );
    assert!(pid(&more[0]) > pid(&pushed[0]), "{more} after {pushed}");
    let err = empty
        .query_one("SELECT queen.shard_set(4096)", &[])
        .unwrap_err();
    assert_eq!(err.as_db_error().unwrap().code().code(), "22023");

    let mut used = fresh_database("queen_shard_set_used");
    let before = call(
        &mut used,
        "SELECT queen.push($1)",
        &[&json!([{"queue": "q", "payload": 1}])],
    );
    let err = used
        .query_one("SELECT queen.shard_set(5)", &[])
        .unwrap_err();
    let db = err.as_db_error().expect("an ERROR");
    assert_eq!(db.code().code(), "55000", "{db:?}");
    assert!(db.message().contains("shard 5"), "{}", db.message());
    // Refused with nothing changed: ids go on from where they were.
    let after = call(
        &mut used,
        "SELECT queen.push($1)",
        &[&json!([{"queue": "q3", "payload": 1}])],
    );
    assert_eq!(pid(&after[0]) >> SHARD_ID_BITS, 0);
    assert!(pid(&after[0]) > pid(&before[0]));
    // As shard 0 it stays as it was.
    call(&mut used, "SELECT queen.shard_set(0)", &[]);
    let last = call(
        &mut used,
        "SELECT queen.push($1)",
        &[&json!([{"queue": "q4", "payload": 1}])],
    );
    assert!(pid(&last[0]) > pid(&after[0]));
    drop((empty, used));
    let mut admin = queen_it::connect();
    for db in ["queen_shard_set_empty", "queen_shard_set_used"] {
        admin
            .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .unwrap();
    }
}

/// The proxy writes nothing of its own: a push and a pop through it leave
/// its transaction without a transaction id (its commit writes no WAL),
/// while the push is stored on its shard.
#[test]
fn a_call_through_the_proxy_takes_no_transaction_id_there() {
    let mut p = proxy();
    let q = unique("noxid");
    let mut t = p.transaction().unwrap();
    let pushed: Value = t
        .query_one(
            "SELECT queen.push($1)::jsonb",
            &[&json!([{"queue": q, "payload": {"n": 1}}])],
        )
        .unwrap()
        .get(0);
    assert_eq!(pushed[0]["status"], "queued", "{pushed}");
    let popped: Value = t
        .query_one("SELECT queen.pop($1, NULL, NULL, 1, '{}')::jsonb", &[&q])
        .unwrap()
        .get(0);
    assert_eq!(
        popped["messages"].as_array().map(Vec::len),
        Some(1),
        "{popped}"
    );
    let xid: Option<String> = t
        .query_one("SELECT pg_current_xact_id_if_assigned()::text", &[])
        .unwrap()
        .get(0);
    assert_eq!(xid, None, "the proxy took a transaction id");
    t.commit().unwrap();
    let mut s = shards();
    let shard = route(&mut p, &q);
    assert_eq!(depth_on(&mut s[shard], &q), 1);
}

/// A proxy backend keeps its heap from one call to the next
/// (`queen_proxy.malloc_keep_bytes`): a push of 100 messages through it
/// takes almost no page faults. With the setting at 0 it gave its heap back
/// after each call, and faulted it in again on the next (a third of its CPU
/// under pushes of 100).
#[test]
fn a_proxy_backend_keeps_its_heap_between_calls() {
    let mut p = proxy();
    let body = queen_it::notes(&unique("heap"), 100).to_string();
    queen_it::assert_heap_kept(
        &mut p,
        "queen_proxy.malloc_keep_bytes",
        2.0,
        "push of 100 through the proxy",
        |p| {
            call(p, "SELECT queen.push_text($1)::text::json", &[&body]);
        },
    );
}

/// An ack body of every shape is split by shard: `{"acknowledgments":
/// [...]}` with the keys beside the list (its consumer group) on each part,
/// and a single ack on its own shard; a body whose partition id can not be
/// read goes whole to one shard, which answers it as it would directly.
#[test]
fn ack_bodies_of_every_shape_reach_the_shards_of_their_partitions() {
    let mut p = proxy();
    let queues = one_queue_per_shard(&mut p, "ack-shapes");
    let group = unique("g");
    let mut acks = Vec::new();
    for q in &queues {
        call(
            &mut p,
            "SELECT queen.push($1)",
            &[&json!([{"queue": q, "payload": 1}, {"queue": q, "payload": 2}])],
        );
        let popped = call(
            &mut p,
            "SELECT queen.pop($1, NULL, $2, 10, '{\"subscriptionMode\": \"all\"}')",
            &[q, &group],
        );
        for m in popped["messages"].as_array().unwrap() {
            acks.push(
                json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                             "leaseId": m["leaseId"], "status": "completed"}),
            );
        }
    }
    assert_eq!(acks.len(), 6);
    // The last ack alone, as one object.
    let single = acks.pop().unwrap();
    let wrapped = json!({"acknowledgments": acks, "consumerGroup": group});
    let acked = call(&mut p, "SELECT queen.ack($1)", &[&wrapped]);
    let acked = acked.as_array().unwrap_or_else(|| panic!("{acked}"));
    assert_eq!(acked.len(), 5);
    for (i, a) in acked.iter().enumerate() {
        assert_eq!(a["index"], i, "{a}");
        assert_eq!(a["transactionId"], acks[i]["transactionId"], "{a}");
        assert_eq!(a["success"], true, "{a}");
    }
    let mut one = single.clone();
    one["consumerGroup"] = json!(group);
    let acked = call(&mut p, "SELECT queen.ack($1)", &[&one]);
    let acked = acked.as_array().map_or(&acked, |a| &a[0]);
    assert_eq!(acked["success"], true, "{acked}");
    // Every message of the group is settled, on every shard.
    for q in &queues {
        let again = call(
            &mut p,
            "SELECT queen.pop($1, NULL, $2, 10, '{}')",
            &[q, &group],
        );
        assert!(
            again["messages"].as_array().is_none_or(Vec::is_empty),
            "{again}"
        );
    }

    // A partition id that is not one: shard 0 answers, as it answers it.
    let bad = json!([{"transactionId": "t", "partitionId": "not-an-id", "leaseId": "l", "status": "completed"}]);
    let through = p.query_one("SELECT queen.ack($1)::text", &[&bad]);
    let mut s = shards();
    let direct = s[0].query_one("SELECT queen.ack($1)::text", &[&bad]);
    match (through, direct) {
        (Ok(t), Ok(d)) => assert_eq!(t.get::<_, String>(0), d.get::<_, String>(0)),
        (Err(t), Err(d)) => {
            assert_eq!(t.code(), d.code());
            assert_eq!(
                t.as_db_error().map(|e| e.message()),
                d.as_db_error().map(|e| e.message())
            );
        }
        (t, d) => panic!("through the proxy {t:?}, directly {d:?}"),
    }
}

/// A compressed binary body is decompressed by the proxy (to find its
/// queues' shards) only within `queen_proxy.decompress_max_bytes`: one that
/// inflates past it is refused (22P03) before any shard sees it; the same
/// body within the setting lands.
#[test]
fn the_proxy_decompresses_a_body_only_within_its_setting() {
    let mut p = proxy();
    let mut s = shards();
    let queues = one_queue_per_shard(&mut p, "inflate");
    let groups: Vec<PushGroup> = queues
        .iter()
        .map(|q| PushGroup {
            queue: q.clone(),
            partition: "Default".into(),
            messages: GroupMessages::Items(vec![PushItem {
                transaction_id: None,
                payload: format!("{{\"fill\":\"{}\"}}", "z".repeat(10_000)).into_bytes(),
            }]),
        })
        .collect();
    let plain = encode_push_body(&groups, false).unwrap();
    let packed = compressed(&plain);
    p.batch_execute("SET queen_proxy.decompress_max_bytes = 16384")
        .unwrap();
    let err = p
        .query_one("SELECT queen.push_binary($1)", &[&packed])
        .unwrap_err();
    let db = err.as_db_error().expect("an ERROR");
    assert_eq!(db.code().code(), "22P03", "{db}");
    assert!(
        db.message().contains("queen_proxy.decompress_max_bytes"),
        "{db}"
    );
    for (n, q) in queues.iter().enumerate() {
        assert_eq!(depth_on(&mut s[n], q), -1, "{q}: nothing reached shard {n}");
    }
    p.batch_execute("RESET queen_proxy.decompress_max_bytes")
        .unwrap();
    let answer = call(&mut p, "SELECT queen.push_binary($1)", &[&packed]);
    assert_eq!(answer.as_array().unwrap().len(), 3, "{answer}");
    for (n, q) in queues.iter().enumerate() {
        assert_eq!(depth_on(&mut s[n], q), 1, "{q} on shard {n}");
    }
}

/// A shard's connection string stays with the installer's roles: an
/// application or monitoring role sees the shards and routes queues, but
/// reads no dsn, in `queen.shards()` or the table; and no dsn holding a
/// password (readable in `pg_foreign_server` by anyone) is taken.
#[test]
fn shard_connection_strings_are_kept_from_the_application_and_monitoring_roles() {
    let mut p = proxy();
    let admin = call(&mut p, "SELECT queen.shards()", &[]);
    assert!(
        admin
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["dsn"].is_string()),
        "{admin}"
    );
    for role in ["queen_app", "pg_monitor"] {
        let mut t = p.transaction().unwrap();
        t.batch_execute(&format!("SET LOCAL ROLE {role}")).unwrap();
        let listed: Value = t.query_one("SELECT queen.shards()", &[]).unwrap().get(0);
        let listed = listed.as_array().unwrap().clone();
        assert_eq!(listed.len(), admin.as_array().unwrap().len(), "{role}");
        assert!(
            listed
                .iter()
                .all(|s| s.get("dsn").is_none() && s["slots"].is_number()),
            "{role}: {listed:?}"
        );
        let route: i32 = t
            .query_one("SELECT queen.route_queue('any-queue')", &[])
            .unwrap()
            .get(0);
        assert!(route >= 0, "{role} routes a queue");
        t.batch_execute("SAVEPOINT s").unwrap();
        let e = t
            .query_one("SELECT dsn FROM queen.proxy_shards LIMIT 1", &[])
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42501"), "{role}: {e}");
        t.batch_execute("ROLLBACK TO SAVEPOINT s").unwrap();
        t.rollback().unwrap();
    }
    for dsn in [
        "host=127.0.0.1 port=1 dbname=x password=secret",
        "postgresql://someone:secret@127.0.0.1:1/x",
    ] {
        let e = p
            .query_one("SELECT queen.shard_add($1)", &[&dsn])
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("22023"), "{dsn}: {e}");
    }
    let after = call(&mut p, "SELECT queen.shards()", &[]);
    assert_eq!(after, admin, "a refused shard_add adds nothing");
}

#[test]
fn a_streaming_query_lives_on_its_source_queues_shard_and_its_cycles_stay_there() {
    let mut p = proxy();
    let mut s = shards();
    let key = uuid::Uuid::new_v4().simple().to_string();
    let (src, sink) = (format!("src{{{key}}}"), format!("sink{{{key}}}"));
    let shard = route(&mut p, &src);
    let name = unique("stream");
    let reg = call(
        &mut p,
        "SELECT queen.stream_register($1)",
        &[&json!({"name": name, "source_queue": src, "config_hash": "h"})],
    );
    assert_eq!(reg["fresh"], true, "{reg}");
    let on_shard: i64 = s[shard]
        .query_one(
            "SELECT count(*) FROM queen.stream_queries WHERE name = $1",
            &[&name],
        )
        .unwrap()
        .get(0);
    assert_eq!(on_shard, 1, "registered on the source queue's shard");

    call(
        &mut p,
        "SELECT queen.push($1)",
        &[&json!([{"queue": src, "partition": "p", "payload": {"v": 1}}])],
    );
    let popped = call(
        &mut p,
        "SELECT queen.pop($1, NULL, 'streams', 10, '{}')",
        &[&src],
    );
    let m = &popped["messages"][0];
    let cycle = |pushes: Value| {
        json!({"query_id": reg["query_id"], "partition_id": m["partitionId"],
               "consumer_group": "streams",
               "state_ops": [{"type": "upsert", "key": "sum", "value": {"acc": 1}}],
               "push_items": pushes,
               "ack": {"transactionId": m["transactionId"], "leaseId": popped["leaseId"], "count": 1}})
    };

    // A sink on another shard: refused, naming both, nothing written.
    let elsewhere = one_queue_per_shard(&mut p, "sink")
        .into_iter()
        .find(|q| route(&mut p, q) != shard)
        .unwrap();
    let err = p
        .query_one(
            "SELECT queen.stream_cycle($1)",
            &[&cycle(json!([{"queue": elsewhere, "payload": {}}]))],
        )
        .unwrap_err();
    let db = err.as_db_error().expect("an ERROR");
    assert_eq!(db.code().code(), "22023", "{db:?}");
    assert!(db.message().contains(&elsewhere), "{}", db.message());
    let state = |p: &mut Client| {
        call(
            p,
            "SELECT queen.stream_state_get($1)",
            &[&json!({"query_id": reg["query_id"], "partition_id": m["partitionId"]})],
        )["rows"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(state(&mut p), 0);

    // A sink with the source's shard key: applied on that shard.
    let done = call(
        &mut p,
        "SELECT queen.stream_cycle($1)",
        &[&cycle(json!([{"queue": sink, "payload": {"sum": 1}}]))],
    );
    assert_eq!(done["success"], true, "{done}");
    assert_eq!(state(&mut p), 1);
    assert_eq!(depth_on(&mut s[shard], &sink), 1);

    let listed = call(&mut p, "SELECT queen.stream_queries()", &[]);
    assert!(listed["queries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|q| q["name"] == json!(name)));
    let gone = call(&mut p, "SELECT queen.stream_delete($1)", &[&name]);
    assert_eq!(
        (gone["deleted"].clone(), gone["state_rows"].clone()),
        (json!(true), json!(1))
    );
}

/// The queue list through the proxy is the list one database would give:
/// every shard's queues of a namespace by name, byte by byte, or newest
/// first (to the millisecond); a page cut after merging, also past the page bound a shard keeps
/// (1000 rows), which bounds the merged page too.
#[test]
fn the_queue_list_through_the_proxy_pages_every_shard_as_one() {
    let mut p = proxy();
    let ns = unique("pages");
    let names: Vec<String> = (0..1010).map(|i| format!("{ns}-{i:04}")).collect();
    let options = json!({"namespace": ns}).to_string();
    for n in &names {
        call(
            &mut p,
            "SELECT queen.configure($1, $2::text::jsonb)",
            &[n, &options],
        );
    }
    let list = |p: &mut Client, asked: Value| -> Value {
        let mut asked = asked;
        asked["namespace"] = json!(ns);
        call(
            p,
            "SELECT queen.queues_list($1::text::jsonb)",
            &[&asked.to_string()],
        )
    };
    let listed = |answer: &Value| -> Vec<String> {
        answer["queues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = list(&mut p, json!({"limit": 1000}));
    assert_eq!(listed(&first), names[..1000].to_vec());
    assert_eq!(first["total"], 1010);
    let past = list(&mut p, json!({"offset": 1000, "limit": 100}));
    assert_eq!(listed(&past), names[1000..].to_vec());
    assert_eq!(past["pagination"], json!({"limit": 100, "offset": 1000}));
    let across = list(&mut p, json!({"offset": 995, "limit": 10}));
    assert_eq!(listed(&across), names[995..1005].to_vec());
    let bounded = list(&mut p, json!({"limit": 5000}));
    assert_eq!(listed(&bounded).len(), 1000);
    assert_eq!(bounded["pagination"]["limit"], 1000);
    // Names in byte order, as every shard orders them.
    let cased = unique("cased");
    for n in ["b", "A", "a", "B"] {
        let opts = json!({"namespace": cased}).to_string();
        call(
            &mut p,
            "SELECT queen.configure($1, $2::text::jsonb)",
            &[&format!("{cased}-{n}"), &opts],
        );
        // Made a few milliseconds apart: newest first is by the time each
        // was made, to the millisecond.
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let by_bytes = call(
        &mut p,
        "SELECT queen.queues_list($1::text::jsonb)",
        &[&json!({"namespace": cased}).to_string()],
    );
    let got: Vec<String> = listed(&by_bytes);
    let want: Vec<String> = ["A", "B", "a", "b"]
        .iter()
        .map(|n| format!("{cased}-{n}"))
        .collect();
    assert_eq!(got, want);
    let newest = call(
        &mut p,
        "SELECT queen.queues_list($1::text::jsonb)",
        &[&json!({"namespace": cased, "order": "newest", "limit": 3}).to_string()],
    );
    let made_last: Vec<String> = ["B", "a", "A"]
        .iter()
        .map(|n| format!("{cased}-{n}"))
        .collect();
    assert_eq!(listed(&newest), made_last);
    for n in names.iter().chain(&want) {
        call(&mut p, "SELECT queen.queue_delete($1)", &[n]);
    }
}
