//! The partition ids a backend remembers for its pushes: a push over
//! partitions it knows locks them by id, and a guess that no longer holds
//! (its queue deleted and made again, its partition deleted and made again
//! by another push) sends the push the long way, to the partitions the names
//! denote now.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use serde_json::{json, Value};

    use crate::engine::known_partitions;
    use crate::tests::support::{datas, js, n, push};
    use crate::wire::push::GroupIn;

    /// One message to each of `partitions` of `queue`.
    fn push_each(queue: &str, partitions: &[&str], payload: i64) -> Value {
        push(Value::Array(
            partitions
                .iter()
                .map(|p| json!({"queue": queue, "partition": p, "payload": payload}))
                .collect(),
        ))
    }

    fn partition_id(queue: &str, name: &str) -> i64 {
        n(&format!(
            "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id \
             WHERE q.name = '{queue}' AND p.name = '{name}'"
        ))
    }

    fn group(queue: &str, partition: &str) -> GroupIn {
        GroupIn {
            queue: queue.into(),
            partition: partition.into(),
            items: Vec::new(),
            packed: None,
        }
    }

    /// (partitionId, offset) of each answer.
    fn landed(answer: &Value) -> Vec<(i64, i64)> {
        answer
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                assert_eq!(a["status"], "queued", "{a}");
                (
                    a["partitionId"].as_str().unwrap().parse().unwrap(),
                    a["offset"].as_i64().unwrap(),
                )
            })
            .collect()
    }

    #[pg_test]
    fn a_push_over_known_partitions_follows_its_queue_made_again() {
        let first = landed(&push_each("kq", &["a", "b"], 1));
        let (a, b) = (partition_id("kq", "a"), partition_id("kq", "b"));
        assert_eq!(first, vec![(a, 0), (b, 0)]);
        assert_eq!(
            known_partitions::recall(&[group("kq", "a"), group("kq", "b")]),
            Some(vec![a, b])
        );
        // Known: locked by id, offsets run on.
        assert_eq!(
            landed(&push_each("kq", &["b", "a"], 2)),
            vec![(b, 1), (a, 1)]
        );

        js("SELECT queen.delete_queue('kq')");
        let again = landed(&push_each("kq", &["a", "b"], 3));
        let (a2, b2) = (partition_id("kq", "a"), partition_id("kq", "b"));
        assert!(a2 != a && b2 != b, "made again: {a2} {b2}");
        assert_eq!(again, vec![(a2, 0), (b2, 0)]);
        assert_eq!(
            known_partitions::recall(&[group("kq", "a"), group("kq", "b")]),
            Some(vec![a2, b2])
        );
        // Only the new queue's messages are there to pop.
        let popped = js("SELECT queen.pop('kq', NULL, NULL, 10, '{}')");
        assert_eq!(datas(&popped), vec![json!(3)]);
    }

    #[pg_test]
    fn a_push_over_known_partitions_finds_one_made_again_elsewhere() {
        push_each("kp", &["a", "b"], 1);
        let (a, b) = (partition_id("kp", "a"), partition_id("kp", "b"));
        // What the empty-partition cleanup does to a dead partition, then a
        // push of its own to the name, which makes it again under a new id.
        Spi::run(&format!(
            "DELETE FROM queen.log_txns WHERE partition_id = {a}; \
             DELETE FROM queen.log_segments WHERE partition_id = {a}; \
             DELETE FROM queen.log_partitions WHERE id = {a}"
        ))
        .unwrap();
        push(json!([{"queue": "kp", "partition": "a", "payload": 2}]));
        let a2 = partition_id("kp", "a");
        assert_ne!(a2, a);
        // The remembered id is gone: the push goes by name.
        assert_eq!(
            landed(&push_each("kp", &["a", "b"], 3)),
            vec![(a2, 1), (b, 1)]
        );
        assert_eq!(
            known_partitions::recall(&[group("kp", "a"), group("kp", "b")]),
            Some(vec![a2, b])
        );
        assert_eq!(
            n(&format!(
                "SELECT count(*) FROM queen.log_segments WHERE partition_id = {a}"
            )),
            0
        );
    }

    #[pg_test]
    fn remembered_partitions_are_bounded_by_the_setting() {
        Spi::run("SET LOCAL queen.push_known_partitions = 3").unwrap();
        for round in 0..3 {
            let names: Vec<String> = (0..5).map(|k| format!("p{round}-{k}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let answer = push_each("kb", &names, round);
            assert_eq!(landed(&answer).len(), 5);
            assert!(
                known_partitions::len() <= 3,
                "{} remembered",
                known_partitions::len()
            );
        }
        Spi::run("SET LOCAL queen.push_known_partitions = 0").unwrap();
        push_each("kb", &["x", "y"], 9);
        assert_eq!(
            known_partitions::recall(&[group("kb", "x"), group("kb", "y")]),
            None
        );
        assert_eq!(
            n("SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id \
               WHERE q.name = 'kb'"),
            17
        );
    }
}
