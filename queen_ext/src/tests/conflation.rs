//! Conflating pops inside PostgreSQL: only the newest message of each
//! partition is delivered and the older ones are completed, in queue mode
//! and for a group that registered conflating; a group registered otherwise
//! keeps every message.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use serde_json::{json, Value};

    use crate::tests::support::{ack_all, datas, js, n, push};

    fn fill(queue: &str, partition: &str, values: std::ops::Range<i32>) {
        let items: Vec<Value> = values
            .map(|v| json!({"queue": queue, "partition": partition, "payload": {"v": v}}))
            .collect();
        push(Value::Array(items));
    }

    fn pop(queue: &str, group: Option<&str>, options: Value) -> Value {
        pop_n(queue, group, 10, options)
    }

    fn pop_n(queue: &str, group: Option<&str>, batch: i32, options: Value) -> Value {
        let group = group.map_or("NULL".to_owned(), |g| format!("'{g}'"));
        js(&format!(
            "SELECT queen.pop('{queue}', NULL, {group}, {batch}, '{options}')"
        ))
    }

    fn values(popped: &Value) -> Vec<i64> {
        let mut v: Vec<i64> = datas(popped)
            .iter()
            .map(|d| d["v"].as_i64().unwrap())
            .collect();
        v.sort_unstable();
        v
    }

    #[pg_test]
    fn a_conflating_pop_in_queue_mode_delivers_each_partitions_newest() {
        fill("cq", "a", 0..5);
        fill("cq", "b", 10..13);
        let got = pop("cq", None, json!({"conflation": true}));
        assert_eq!(
            values(&got),
            vec![4, 12],
            "one message per partition: its newest"
        );
        assert_eq!(got["conflation"], json!(true));
        assert_eq!(got["conflated"], json!(6), "4 + 2 older messages completed");
        assert!(got.get("conflationConflict").is_none());
        ack_all(&got, "completed", None);
        fill("cq", "a", 5..6);
        let again = pop("cq", None, json!({"conflation": true}));
        assert_eq!(
            (values(&again), again["conflated"].clone()),
            (vec![5], json!(0))
        );
        ack_all(&again, "completed", None);
        let empty = pop("cq", None, json!({"conflation": true}));
        assert!(empty["messages"].as_array().unwrap().is_empty());
        assert_eq!(
            empty["conflation"],
            json!(true),
            "an empty pop still says so"
        );
        // Everything was completed: a plain pop in queue mode finds nothing.
        assert!(pop("cq", None, json!({}))["messages"]
            .as_array()
            .unwrap()
            .is_empty());
    }

    #[pg_test]
    fn a_group_conflates_as_it_registered() {
        fill("cg", "a", 0..4);
        // Registered by a conflating pop: it conflates.
        let got = pop("cg", Some("latest"), json!({"conflation": true}));
        assert_eq!(
            (values(&got), got["conflated"].clone()),
            (vec![3], json!(3))
        );
        assert_eq!(
            n("SELECT count(*) FROM queen.consumer_groups WHERE consumer_group = 'latest' AND conflation"),
            1
        );
        // Unacked, the newest is delivered again once its lease is handed
        // back; the older ones stay completed.
        ack_all(&got, "retry", Some("latest"));
        let again = pop("cg", Some("latest"), json!({"conflation": true}));
        assert_eq!(
            (values(&again), again["conflated"].clone()),
            (vec![3], json!(0))
        );
        assert_eq!(again["messages"][0]["deliveryAttempt"], json!(2));

        // Registered by a plain pop: a later conflating pop is told it does
        // not conflate, and gets every message.
        let plain = pop_n("cg", Some("every"), 1, json!({}));
        assert_eq!(values(&plain), vec![0]);
        ack_all(&plain, "completed", Some("every"));
        let asked = pop("cg", Some("every"), json!({"conflation": true}));
        assert_eq!(asked["conflationConflict"], json!(true));
        assert!(asked.get("conflation").is_none());
        assert_eq!(values(&asked), vec![1, 2, 3]);

        // The readers say which group conflates.
        let depth = |g: &str| js(&format!("SELECT queen.queue_depth('cg', '{g}')"));
        assert_eq!(depth("latest")["conflation"], json!(true));
        assert_eq!(depth("every")["conflation"], json!(false));
        let listed = js("SELECT queen.consumer_groups_summary()");
        let of = |g: &str| {
            listed
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == json!(g))
                .unwrap()["conflation"]
                .clone()
        };
        assert_eq!((of("latest"), of("every")), (json!(true), json!(false)));
        assert_eq!(
            js("SELECT queen.consumer_group_detail('latest')")["cg"]["conflation"],
            json!(true)
        );
    }

    #[pg_test(
        error = "options.conflation: can not be combined with autoAck: a conflated batch is completed by its ack"
    )]
    fn conflation_with_auto_ack_is_refused() {
        pop(
            "cr",
            Some("g"),
            json!({"conflation": true, "autoAck": true}),
        );
    }
}
