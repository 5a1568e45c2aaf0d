//! The one read of a queue and the one list of queues: `queue_get` and
//! `queues_list` carry every figure their deprecated twins (the resource
//! and status readers) answer, under their own names.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::{Json, JsonB};
    use serde_json::{json, Value};

    use crate::tests::support::{ack, js, push};

    fn call(sql: &str, arg: Value) -> Value {
        Spi::get_one_with_args::<Json>(sql, &[JsonB(arg).into()])
            .unwrap()
            .unwrap()
            .0
    }

    fn pop(queue: &str, partition: &str, group: Option<&str>, batch: i32) -> Value {
        Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, $2, $3, $4, '{}')",
            &[queue.into(), partition.into(), group.into(), batch.into()],
        )
        .unwrap()
        .unwrap()
        .0
    }

    /// The ack of message `i` of a pop's answer with `status`.
    fn acked(popped: &Value, i: usize, status: &str) -> Value {
        let m = &popped["messages"][i];
        json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
               "leaseId": m["leaseId"], "status": status, "error": "no"})
    }

    /// Queue `one-read` in namespace `one-ns`: partition `a` with three
    /// messages, one done, one dead-lettered and one leased in queue mode;
    /// partition `b` with two, one leased by group `g`.
    fn one_read() {
        js("SELECT queen.configure('one-read', '{\"namespace\": \"one-ns\", \"leaseTime\": 30}')");
        push(json!([
            {"queue": "one-read", "partition": "a", "payload": 1},
            {"queue": "one-read", "partition": "a", "payload": 2},
            {"queue": "one-read", "partition": "a", "payload": 3},
            {"queue": "one-read", "partition": "b", "payload": 4},
            {"queue": "one-read", "partition": "b", "payload": 5},
        ]));
        let p = pop("one-read", "a", None, 2);
        ack(json!([acked(&p, 0, "completed"), acked(&p, 1, "dlq")]));
        assert_eq!(
            pop("one-read", "a", None, 1)["messages"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            pop("one-read", "b", Some("g"), 1)["messages"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }

    /// Asserts that `one` (a partition or the totals of `queue_get`)
    /// carries the resource view's `stats` (or `totals`).
    fn carries_stats(one: &Value, stats: &Value) {
        let slowest = &one["slowestCursor"];
        assert_eq!(one["messages"], stats["total"], "{one} {stats}");
        assert_eq!(one["failed"], stats["deadLetter"], "{one} {stats}");
        for k in ["pending", "processing", "completed"] {
            assert_eq!(slowest[k], stats[k], "{k}: {one} {stats}");
        }
    }

    /// Asserts that `one` (a row of `queues_list` or a partition or the
    /// totals of `queue_get`) carries the status view's live `messages`.
    fn carries_live(one: &Value, live: &Value) {
        let all = &one["allCursors"];
        assert_eq!(one["messages"], live["total"], "{one} {live}");
        assert_eq!(one["failed"], live["deadLetter"], "{one} {live}");
        for k in ["pending", "processing", "completed"] {
            assert_eq!(all[k], live[k], "{k}: {one} {live}");
        }
    }

    #[pg_test]
    fn queue_get_carries_what_resource_queue_answers() {
        one_read();
        let one = js("SELECT queen.queue_get('one-read')");
        let res = js("SELECT queen.resource_queue('one-read')");
        for k in [
            "id",
            "name",
            "namespace",
            "task",
            "createdAt",
            "options",
            "retainedBytes",
            "segments",
        ] {
            assert_eq!(one[k], res[k], "{k}");
        }
        assert_eq!(one["totals"]["partitions"], res["totals"]["partitions"]);
        carries_stats(&one["totals"], &res["totals"]);
        let (mine, theirs) = (
            one["partitions"].as_array().unwrap(),
            res["partitions"].as_array().unwrap(),
        );
        assert_eq!(mine.len(), 2);
        assert_eq!(mine.len(), theirs.len());
        for (p, r) in mine.iter().zip(theirs) {
            for k in [
                "id",
                "name",
                "createdAt",
                "lastOffset",
                "logStart",
                "oldestMessage",
                "newestMessage",
            ] {
                assert_eq!(p[k], r[k], "{k}");
            }
            carries_stats(p, &r["stats"]);
        }
        // What queue_get answered before stays.
        assert_eq!(one["pruned_failed"], 0);
        for p in mine {
            for k in ["id", "name", "lastOffset", "logStart", "lastWriteAt"] {
                assert!(p.get(k).is_some(), "{k}: {p}");
            }
        }
        assert_eq!(one["totals"]["messages"], 5);
        assert_eq!(one["totals"]["failed"], 1);
    }

    #[pg_test]
    fn queue_get_carries_what_status_queue_answers() {
        one_read();
        let one = js("SELECT queen.queue_get('one-read')");
        let st = js("SELECT queen.status_queue('one-read')");
        let q = &st["queue"];
        for k in ["id", "name", "namespace", "task", "createdAt"] {
            assert_eq!(one[k], q[k], "{k}");
        }
        assert_eq!(one["options"]["priority"], q["priority"]);
        for k in [
            "leaseTime",
            "retryLimit",
            "retryDelay",
            "maxQueueSize",
            "deadLetterQueue",
            "ttl",
        ] {
            assert_eq!(one["options"][k], q["config"][k], "{k}");
        }
        let (mine, theirs) = (
            one["partitions"].as_array().unwrap(),
            st["partitions"].as_array().unwrap(),
        );
        assert_eq!(mine.len(), theirs.len());
        for (p, s) in mine.iter().zip(theirs) {
            for k in ["id", "name", "createdAt", "oldestMessage", "newestMessage"] {
                assert_eq!(p[k], s[k], "{k}");
            }
            assert_eq!(p["lastWriteAt"], s["lastActivity"]);
            assert_eq!(p["consumed"], s["cursor"]["totalConsumed"]);
            carries_live(p, &s["messages"]);
        }
        carries_live(&one["totals"], &st["totals"]["messages"]);
        // The two readings differ here: the slowest cursor of `a` has not
        // passed the dead letter's offset, and group `g` has consumed
        // nothing of `b`.
        assert_ne!(
            one["totals"]["slowestCursor"]["pending"], one["totals"]["allCursors"]["pending"],
            "{one}"
        );
    }

    #[pg_test]
    fn queues_list_carries_what_its_twins_list() {
        one_read();
        js("SELECT queen.configure('one-other', '{\"namespace\": \"one-ns\"}')");
        js("SELECT queen.configure('one-third', '{\"namespace\": \"one-ns\"}')");
        let listed = js("SELECT queen.queues_list()");
        let res = js("SELECT queen.resource_queues()");
        let st = call(
            "SELECT queen.status_queues($1)",
            json!({"namespace": "one-ns"}),
        );
        let row = |v: &Value| -> Value {
            v["queues"]
                .as_array()
                .unwrap()
                .iter()
                .find(|q| q["name"] == "one-read")
                .cloned()
                .unwrap()
        };
        let (mine, r, s) = (row(&listed), row(&res), row(&st));
        for k in [
            "id",
            "name",
            "namespace",
            "task",
            "createdAt",
            "partitions",
            "retainedBytes",
            "segments",
        ] {
            assert_eq!(mine[k], r[k], "{k}");
        }
        assert_eq!(mine["messages"], r["messages"]["total"]);
        for k in ["pending", "processing"] {
            assert_eq!(mine["slowestCursor"][k], r["messages"][k], "{k}");
        }
        for k in ["id", "name", "namespace", "task", "createdAt", "partitions"] {
            assert_eq!(mine[k], s[k], "{k}");
        }
        carries_live(&mine, &s["messages"]);
        assert_eq!(
            (mine["messages"].clone(), mine["failed"].clone()),
            (json!(5), json!(1))
        );
    }

    /// The names of a list's queues, in its order.
    fn names(v: &Value) -> Vec<Value> {
        v["queues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["name"].clone())
            .collect()
    }

    #[pg_test]
    fn queues_list_orders_and_counts_as_its_twins() {
        one_read();
        js("SELECT queen.configure('one-other', '{\"namespace\": \"one-ns\"}')");
        js("SELECT queen.configure('one-third', '{\"namespace\": \"one-ns\"}')");
        let listed = js("SELECT queen.queues_list()");
        let res = js("SELECT queen.resource_queues()");
        for k in ["kvRows", "kvBytes", "timerRows", "timerBytes"] {
            assert_eq!(listed[k], res[k], "{k}");
        }
        assert_eq!(listed["total"], json!(names(&res).len()));
        // This test's queues, whose names sort alike in any collation.
        let ours: Vec<Value> = names(&listed)
            .into_iter()
            .filter(|n| n.as_str().is_some_and(|n| n.starts_with("one-")))
            .collect();
        assert_eq!(
            Value::Array(ours),
            json!(["one-other", "one-read", "one-third"]),
            "by name"
        );
        let newest = call("SELECT queen.queues_list($1)", json!({"order": "newest"}));
        assert_eq!(
            names(&newest),
            names(&res),
            "newest first, as resource_queues"
        );
    }

    #[pg_test]
    fn queues_list_filters_and_pages_as_status_queues() {
        one_read();
        js("SELECT queen.configure('one-other', '{\"namespace\": \"one-ns\"}')");
        js("SELECT queen.configure('one-third', '{\"namespace\": \"one-ns\", \"task\": \"t\"}')");
        for asked in [
            json!({"namespace": "one-ns", "limit": "1", "offset": "1"}),
            json!({"namespace": "one-ns", "task": "t"}),
            json!({"queue": "one-read", "limit": "5000"}),
            json!({"namespace": "one-ns", "limit": "", "offset": "2"}),
        ] {
            let st = call("SELECT queen.status_queues($1)", asked.clone());
            let mut mine = asked.clone();
            mine["order"] = json!("newest");
            if asked.get("limit").is_none_or(|l| l.as_str() == Some("")) {
                mine["limit"] = json!("100");
            }
            let listed = call("SELECT queen.queues_list($1)", mine);
            assert_eq!(names(&listed), names(&st), "{asked}");
            assert_eq!(listed["pagination"], st["pagination"], "{asked}");
        }
        let all = call(
            "SELECT queen.queues_list($1)",
            json!({"namespace": "one-ns", "limit": "1"}),
        );
        assert_eq!(all["total"], 3, "every match counted, whatever the page");
        assert_eq!(all["queues"].as_array().unwrap().len(), 1);
    }

    #[pg_test(error = "queue \"one-none\" does not exist")]
    fn queue_get_of_an_unknown_queue_is_refused() {
        js("SELECT queen.queue_get('one-none')");
    }

    #[pg_test(error = "order: \"oldest\" is not one of name, newest")]
    fn queues_list_refuses_an_unknown_order() {
        call("SELECT queen.queues_list($1)", json!({"order": "oldest"}));
    }
}
