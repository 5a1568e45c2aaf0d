//! The pop's memo of done partitions, inside PostgreSQL: a queue of many
//! partitions of which few hold messages costs the partitions that do
//! (counted as probes of the segments' key), and nothing is ever passed by
//! that the group has not done: a push to a done partition, a seek back, a
//! group deleted and made again are each seen by the very next pop, and
//! each group has its own memo (a rolled-back transaction's memo goes with
//! it: tests/tests/engine.rs). Each test runs in one transaction, as a SQL
//! client's calls in one transaction would.

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::Json;
    use serde_json::{json, Value};

    use crate::tests::support::{datas, n, push};

    /// Partitions of the sparse queue.
    const PARTITIONS: usize = 64;

    fn pop(queue: &str, group: &str) -> Vec<Value> {
        let popped = Spi::get_one_with_args::<Json>(
            "SELECT queen.pop($1, NULL, $2, 1, '{\"autoAck\": true}')",
            &[queue.into(), group.into()],
        )
        .unwrap()
        .unwrap()
        .0;
        datas(&popped)
    }

    /// Pops until a pop finds nothing (at most `most` pops): every datum.
    fn drain(queue: &str, group: &str, most: usize) -> Vec<Value> {
        let mut got = Vec::new();
        for _ in 0..most {
            let more = pop(queue, group);
            if more.is_empty() {
                break;
            }
            got.extend(more);
        }
        got
    }

    /// Probes of the segments' key made in this transaction so far.
    fn segment_probes() -> i64 {
        n("SELECT pg_stat_get_xact_numscans('queen.log_segments_pkey'::regclass)")
    }

    /// A queue of [`PARTITIONS`] partitions of one message each, all done
    /// by `group`, read in windows of 16.
    fn sparse(queue: &str, group: &str) {
        Spi::run("SET LOCAL queen.pop_scan_window = 16").unwrap();
        let items: Vec<Value> = (0..PARTITIONS)
            .map(|p| json!({"queue": queue, "partition": format!("p{p:02}"), "payload": p}))
            .collect();
        push(Value::Array(items));
        let got = drain(queue, group, PARTITIONS + 5);
        assert_eq!(got.len(), PARTITIONS);
    }

    /// Pushes `payload` to `partition` of `queue`.
    fn push_one(queue: &str, partition: &str, payload: Value) {
        push(json!([{"queue": queue, "partition": partition, "payload": payload}]));
    }

    #[pg_test]
    fn a_sparse_queue_costs_the_partitions_that_hold_messages() {
        sparse("m_sparse", "g");
        // The pops that found the queue sparse surveyed it: a round of
        // windows over the whole queue now probes no done partition.
        let before = segment_probes();
        for _ in 0..(PARTITIONS / 16) {
            assert!(pop("m_sparse", "g").is_empty());
        }
        let probes = segment_probes() - before;
        assert!(
            probes < (PARTITIONS / 4) as i64,
            "{probes} probes of the segments for a round of a queue the group has done"
        );
        // A push to one of them is found by the next pops.
        push_one("m_sparse", "p37", json!("late"));
        assert_eq!(drain("m_sparse", "g", 10), [json!("late")]);
    }

    #[pg_test]
    fn a_seek_back_is_seen_by_the_next_pop() {
        sparse("m_seek", "g");
        assert!(pop("m_seek", "g").is_empty());
        Spi::run(
            "SELECT queen.consumer_group_seek_queue('g', 'm_seek', '{\"position\": \"beginning\"}')",
        )
        .unwrap();
        assert_eq!(drain("m_seek", "g", PARTITIONS + 5).len(), PARTITIONS);
    }

    #[pg_test]
    fn a_group_made_again_reads_from_its_subscription() {
        sparse("m_again", "g");
        assert!(pop("m_again", "g").is_empty());
        Spi::run("SELECT queen.consumer_group_delete('g', 'm_again', true)").unwrap();
        assert_eq!(drain("m_again", "g", PARTITIONS + 5).len(), PARTITIONS);
    }

    #[pg_test]
    fn each_group_has_its_own_memo() {
        sparse("m_other", "g");
        assert!(pop("m_other", "g").is_empty());
        // Another group that has read nothing still reads everything.
        assert_eq!(drain("m_other", "h", PARTITIONS + 5).len(), PARTITIONS);
        push_one("m_other", "p06", json!("after"));
        assert_eq!(drain("m_other", "g", 10), [json!("after")]);
        assert_eq!(drain("m_other", "h", 10), [json!("after")]);
    }

    /// Every push raises its partition's end bound in shared memory; a
    /// deleted queue's partitions are forgotten there (their slots serve
    /// others), and a forgotten slot takes a new entry.
    #[pg_test]
    fn a_deleted_queues_partitions_leave_the_shared_bounds() {
        use crate::catalog::ends;
        let items: Vec<Value> = (0..4)
            .flat_map(|p| {
                (0..=p).map(
                    move |i| json!({"queue": "m_gone", "partition": format!("p{p}"), "payload": i}),
                )
            })
            .collect();
        push(Value::Array(items));
        let pids: Vec<(i64, i64)> = (0..4)
            .map(|p| {
                let pid = n(&format!(
                    "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                      WHERE q.name = 'm_gone' AND p.name = 'p{p}'"
                ));
                (pid, p as i64)
            })
            .collect();
        for &(pid, end) in &pids {
            assert_eq!(ends::bound(pid), Some(end), "partition {pid}");
        }
        Spi::run("SELECT queen.delete_queue('m_gone')").unwrap();
        for &(pid, _) in &pids {
            assert_eq!(
                ends::bound(pid),
                None,
                "partition {pid} after its queue's deletion"
            );
        }
        let (pid, _) = pids[0];
        ends::learn(pid, 41);
        assert_eq!(ends::bound(pid), Some(41));
        ends::raise(pid, 40);
        assert_eq!(ends::bound(pid), Some(41), "a bound only rises");
        ends::forget(&[pid]);
        assert_eq!(ends::bound(pid), None);
    }
}
